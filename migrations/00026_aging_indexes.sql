-- +goose NO TRANSACTION
-- +goose Up
-- What the lifecycle manager ages out of two plain tables that grew without
-- bound (internal/store/lifecycle): reconciliation runs, with their
-- corrections, past the key horizon, and object links past the links horizon.
-- Without these, each pass scanned the whole table to find what was old,
-- whether anything was or not: for 3.4 million runs (1,000 sources every 15
-- minutes for 35 days) 195 ms and 225 MB read by a pass that deleted nothing,
-- for 2 million links 256 ms; with them 0.1 ms and 0.2 ms.
--
-- A run ends after it began, so started_at bounds the search for runs
-- that ended long ago; links are found by when they were recorded. Built
-- CONCURRENTLY (ingest records links while an upgrade runs), hence NO
-- TRANSACTION; an interrupted build leaves an invalid index, which the DROP
-- before each CREATE clears when the migration runs again.
DROP INDEX CONCURRENTLY IF EXISTS reconcile_runs_started_at;
CREATE INDEX CONCURRENTLY reconcile_runs_started_at ON reconcile_runs (started_at);
DROP INDEX CONCURRENTLY IF EXISTS object_links_created_at;
CREATE INDEX CONCURRENTLY object_links_created_at ON object_links (created_at);

-- +goose Down
DROP INDEX CONCURRENTLY IF EXISTS object_links_created_at;
DROP INDEX CONCURRENTLY IF EXISTS reconcile_runs_started_at;
