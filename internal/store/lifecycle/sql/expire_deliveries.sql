-- One batch of deliveries created longer ago than the payload horizon
-- ($1), in any state, and the failed attempts they cascade to (counted
-- before they go), out of the queue too. The range index deliveries_created
-- (00030) finds them.
WITH doomed AS (
    SELECT id, endpoint_id FROM deliveries WHERE created_at < $1 LIMIT $2
), dequeued AS (
    DELETE FROM pending_deliveries p USING doomed WHERE p.endpoint_id = doomed.endpoint_id AND p.id = doomed.id
), attempts AS (
    SELECT count(*) AS n FROM delivery_attempts WHERE delivery_id IN (SELECT id FROM doomed)
), gone AS (
    DELETE FROM deliveries WHERE id IN (SELECT id FROM doomed) RETURNING 1
)
SELECT (SELECT count(*) FROM gone), (SELECT n FROM attempts)
