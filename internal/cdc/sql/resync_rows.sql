-- Outbox rows to re-publish, in id order (insertion order, which per
-- resource key is the order ingest wrote them).
SELECT id::text, topic, key, headers::text, payload, inbox_id::text
FROM outbox WHERE created_at >= $1 ORDER BY outbox.id
