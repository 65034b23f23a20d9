-- Dead letters, newest first; $1 = '' for every group; $2: include replayed.
SELECT id, consumer_group, topic, partition, "offset", coalesce(headers->>'ce_id', ''), coalesce(headers->>'ce_type', ''),
       reason, attempts, first_failed_at, last_failed_at, replayed_at
FROM dead_letters
WHERE ($1 = '' OR consumer_group = $1) AND ($2 OR replayed_at IS NULL)
ORDER BY id DESC
LIMIT $3
