-- A 2xx: the delivery is done, and on an ordered endpoint ($4) the next
-- pending delivery of its key is due now, in one statement. Its figures
-- stay on the row; the success path writes no attempt row. The next is
-- touched even when not parked: the new row version makes a concurrent park
-- of it (read before this commit) miss its compare.
WITH done AS (
    UPDATE deliveries
    SET state = 'delivered', delivered_at = now(), last_status = $2, latency_ms = $3, last_error = NULL
    WHERE id = $1 AND state = 'pending'
    RETURNING endpoint_id, partition_key
)
UPDATE deliveries d
SET next_at = least(d.next_at, now())
WHERE $4::boolean AND d.id = (
    SELECT min(e.id) FROM deliveries e, done
    WHERE e.endpoint_id = done.endpoint_id AND e.partition_key = done.partition_key
      AND e.state = 'pending' AND e.id <> $1)
