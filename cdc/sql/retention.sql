-- One batch of outbox rows past retention. Batches keep each transaction
-- (and the WAL it writes) small; SKIP LOCKED never waits on another deleter.
DELETE FROM outbox WHERE id IN (
    SELECT id FROM outbox WHERE created_at < $1 ORDER BY created_at LIMIT $2 FOR UPDATE SKIP LOCKED
)
