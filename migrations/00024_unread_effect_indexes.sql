-- +goose NO TRANSACTION
-- +goose Up
-- The effects' processed_at indexes are written with every effect and read
-- by no query: the operators' trail finds effects by business key, and no
-- lifecycle job ages effects out by time. Each cost a btree insert per grant,
-- reversal and alert, and on the projections (subscriptions, installations,
-- verifications) it did more: their upserts set processed_at, and an indexed
-- column changed makes every update a non-HOT one, with a new entry in every
-- index of the table. Dropped CONCURRENTLY (no lock against the consumers'
-- writes), hence NO TRANSACTION; IF EXISTS lets an interrupted run go again.
DROP INDEX CONCURRENTLY IF EXISTS credit_grants_processed_at;
DROP INDEX CONCURRENTLY IF EXISTS credit_reversals_processed_at;
DROP INDEX CONCURRENTLY IF EXISTS subscriptions_processed_at;
DROP INDEX CONCURRENTLY IF EXISTS github_installations_processed_at;
DROP INDEX CONCURRENTLY IF EXISTS verifications_processed_at;
DROP INDEX CONCURRENTLY IF EXISTS feedback_alerts_processed_at;
-- +goose Down
CREATE INDEX CONCURRENTLY IF NOT EXISTS feedback_alerts_processed_at ON feedback_alerts (processed_at);
CREATE INDEX CONCURRENTLY IF NOT EXISTS verifications_processed_at ON verifications (processed_at);
CREATE INDEX CONCURRENTLY IF NOT EXISTS github_installations_processed_at ON github_installations (processed_at);
CREATE INDEX CONCURRENTLY IF NOT EXISTS subscriptions_processed_at ON subscriptions (processed_at);
CREATE INDEX CONCURRENTLY IF NOT EXISTS credit_reversals_processed_at ON credit_reversals (processed_at);
CREATE INDEX CONCURRENTLY IF NOT EXISTS credit_grants_processed_at ON credit_grants (processed_at);
