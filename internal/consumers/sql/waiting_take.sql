-- The oldest records a partition of a group set aside, in offset order:
-- the next retry's batch.
SELECT "offset", key, headers, payload, record_time, reason, attempts, waiting_since
FROM consumer_waiting
WHERE consumer_group = $1 AND topic = $2 AND partition = $3
ORDER BY "offset"
LIMIT $4
