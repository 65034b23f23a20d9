-- +goose NO TRANSACTION
-- +goose Up
-- Built CONCURRENTLY, so an upgrade never blocks ingest while the inbox is
-- scanned; both are partial, so the common path (a published event of a
-- built-in type) never pays for them.
--
-- Events a release may publish: kept unhandled or quarantined, by tenant and
-- type (a Stripe type Sluice does not handle is kept unhandled too, and is
-- what a tenant may later register).
CREATE INDEX CONCURRENTLY IF NOT EXISTS inbox_releasable
    ON inbox (tenant_id, event_type, id) WHERE status IN ('unhandled', 'quarantined');
-- Events a catalogue version accepted: what the next compatible version is
-- checked against.
CREATE INDEX CONCURRENTLY IF NOT EXISTS inbox_event_type_version
    ON inbox (event_type_version_id, id) WHERE event_type_version_id IS NOT NULL;

-- +goose Down
DROP INDEX CONCURRENTLY IF EXISTS inbox_event_type_version;
DROP INDEX CONCURRENTLY IF EXISTS inbox_releasable;
