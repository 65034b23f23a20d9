-- An endpoint's due deliveries not leased, oldest due first, each with
-- whether it is its resource key's head: the lowest pending id of its key
-- (an unordered endpoint treats every one as a head), read from
-- deliveries_heads, the one index in that order. A head in flight is
-- pending, so its followers are not heads. xmin lets the caller park a
-- non-head only if no one changed it since (park.sql).
SELECT d.id, d.xmin::text,
       NOT $3::boolean OR d.id = (
           SELECT min(e.id) FROM deliveries e
           WHERE e.endpoint_id = d.endpoint_id AND e.partition_key = d.partition_key AND e.state = 'pending')
FROM deliveries d
WHERE d.endpoint_id = $1 AND d.state = 'pending' AND d.next_at <= now()
  AND (d.leased_until IS NULL OR d.leased_until <= now())
ORDER BY d.next_at
LIMIT $2
