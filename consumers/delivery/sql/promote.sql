-- The next pending delivery of a finished one's key is due now. Touched even
-- when not parked: the new row version makes a concurrent park of it (read
-- before this commit) miss its compare.
UPDATE deliveries d
SET next_at = least(d.next_at, now())
WHERE d.id = (SELECT min(e.id) FROM deliveries e
              WHERE e.endpoint_id = $1 AND e.partition_key = $2 AND e.state = 'pending' AND e.id <> $3)
