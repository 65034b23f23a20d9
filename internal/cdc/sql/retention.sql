-- One batch of outbox rows past retention. Batches keep each transaction
-- (and the WAL it writes) small; SKIP LOCKED never waits on another deleter.
-- No ORDER BY: created_at has a BRIN index (rows are appended in time
-- order), whose scan already reads the oldest blocks first and stops at the
-- LIMIT, where sorting would read every expired row for each batch.
DELETE FROM outbox WHERE id IN (
    SELECT id FROM outbox WHERE created_at < $1 LIMIT $2 FOR UPDATE SKIP LOCKED
)
