-- Pending parked records to publish, oldest first: record $1 (when above
-- 0) or every one of topic $2.
SELECT id, topic, key, coalesce(headers, '{}'), payload
FROM cdc_parked
WHERE released_at IS NULL AND (id = $1 OR ($1 <= 0 AND topic = $2))
ORDER BY id
