-- The row that already holds an event key, to compare content with: its
-- hashes, and its body while it is kept (NULL once its payload is gone).
SELECT i.id, i.body_sha256, i.json_sha256, coalesce(p.body, i.body)
FROM inbox i
LEFT JOIN inbox_payloads p ON p.inbox_id = i.id AND p.received_at = i.received_at
WHERE i.source_id = $1 AND i.source_account = $2 AND i.event_id = $3
