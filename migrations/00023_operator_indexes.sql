-- +goose NO TRANSACTION
-- +goose Up
-- The indexes operators' searches need (internal/operator/operate), built
-- CONCURRENTLY: on a large inbox a plain CREATE INDEX would block ingest's
-- inserts for the whole build. CONCURRENTLY cannot run in a transaction,
-- hence NO TRANSACTION; an interrupted build leaves an invalid index, which
-- the DROP before each CREATE clears when the migration runs again.
--
-- On the ingest path (one more btree insert per accepted event each):
-- inbox_event_id answers "find provider event evt_..." across sources (the
-- event key's unique index leads with the source); inbox_object_id answers
-- "every event about in_..."; inbox_unsettled (partial: only rows that are
-- not published, a small share) lists quarantined, waiting and unhandled
-- events newest first. A tenant's deliveries over a time range use
-- inbox_tenant_received_at (00001); a source's resolve to its tenant's.
-- Their ingest cost is measured by `make bench` (see README, "Operating").
--
-- Off the ingest path: dead letters and corrections by the inbox row they
-- concern (an event's trail), feedback alerts by feedback (the trail finds
-- an event's alert by its business key without the project).
DROP INDEX CONCURRENTLY IF EXISTS inbox_event_id;
CREATE INDEX CONCURRENTLY inbox_event_id ON inbox (event_id);
DROP INDEX CONCURRENTLY IF EXISTS inbox_object_id;
CREATE INDEX CONCURRENTLY inbox_object_id ON inbox (object_id);
DROP INDEX CONCURRENTLY IF EXISTS inbox_unsettled;
CREATE INDEX CONCURRENTLY inbox_unsettled ON inbox (received_at) WHERE status <> 'published';
DROP INDEX CONCURRENTLY IF EXISTS dead_letters_inbox_id;
-- Text, not cast: a record with a malformed header must still be kept.
CREATE INDEX CONCURRENTLY dead_letters_inbox_id ON dead_letters ((headers->>'sluice_inboxid'));
DROP INDEX CONCURRENTLY IF EXISTS reconcile_corrections_inbox_id;
CREATE INDEX CONCURRENTLY reconcile_corrections_inbox_id ON reconcile_corrections (inbox_id);
DROP INDEX CONCURRENTLY IF EXISTS feedback_alerts_feedback;
CREATE INDEX CONCURRENTLY feedback_alerts_feedback ON feedback_alerts (source_id, source_account, feedback_id);

-- +goose Down
DROP INDEX CONCURRENTLY IF EXISTS feedback_alerts_feedback;
DROP INDEX CONCURRENTLY IF EXISTS reconcile_corrections_inbox_id;
DROP INDEX CONCURRENTLY IF EXISTS dead_letters_inbox_id;
DROP INDEX CONCURRENTLY IF EXISTS inbox_unsettled;
DROP INDEX CONCURRENTLY IF EXISTS inbox_object_id;
DROP INDEX CONCURRENTLY IF EXISTS inbox_event_id;
