-- The row that already holds an event key, to compare content with.
SELECT id, body_sha256, body
FROM inbox
WHERE source_id = $1 AND source_account = $2 AND event_id = $3
