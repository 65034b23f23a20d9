-- The delivered and dead deliveries of endpoint $1 created in [$2, $3),
-- oldest first, at most $4, back to pending, due now (endpoint.replay).
-- Pending ones are left to their schedule: one may be on its way now. Returns how many moved and the creation time of the
-- last one (where a capped replay goes on from). The index
-- deliveries_endpoint_created finds the window in order.
WITH chosen AS (
    SELECT id, created_at FROM deliveries
    WHERE endpoint_id = $1 AND created_at >= $2 AND created_at < $3 AND state <> 'pending'
    ORDER BY created_at, id
    LIMIT $4
    FOR UPDATE
), moved AS (
    UPDATE deliveries d SET state = 'pending', next_at = now() FROM chosen c WHERE d.id = c.id RETURNING 1
)
SELECT (SELECT count(*) FROM moved), (SELECT max(created_at) FROM chosen)
