-- +goose NO TRANSACTION
-- +goose Up
-- The operators' search by provider event id across sources gets an index
-- that only it can use, so that ingest's key probe (ingest/sql/accept.sql)
-- always reads the event key's unique index, with the whole key.
--
-- inbox_event_id (00023) was on (event_id): smaller than the event key's
-- index, so a plan made on a small inbox chose it for the probe, which then
-- read every row sharing the event id (tenants of the events API choose ids
-- like "evt_1", and many share them). This one is on event_id COLLATE "C":
-- Postgres uses an index only for comparisons of its own collation, and the
-- probe compares in the column's, so only a statement that asks for "C"
-- (internal/operator/operate's search) reaches it. Equality is the same in
-- every deterministic collation, so the search finds the same rows.
--
-- Built before the old one is dropped, so the search is never without an
-- index; CONCURRENTLY, so ingest's inserts are not blocked while it builds.
-- An interrupted build leaves an invalid index: the DROP before the CREATE
-- clears it when the migration runs again.
DROP INDEX CONCURRENTLY IF EXISTS inbox_provider_event_id;
CREATE INDEX CONCURRENTLY inbox_provider_event_id ON inbox (event_id COLLATE "C");
DROP INDEX CONCURRENTLY IF EXISTS inbox_event_id;

-- +goose Down
DROP INDEX CONCURRENTLY IF EXISTS inbox_event_id;
CREATE INDEX CONCURRENTLY inbox_event_id ON inbox (event_id);
DROP INDEX CONCURRENTLY IF EXISTS inbox_provider_event_id;
