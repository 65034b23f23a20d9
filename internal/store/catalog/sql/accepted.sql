-- Events version $1 accepted whose payload is still held, newest first,
-- below inbox id $2, at most $3: what a compatible next version must accept.
-- An erased or expired payload is left out (it cannot be checked).
SELECT i.id, i.event_id, p.body
FROM inbox i
JOIN inbox_payloads p ON p.inbox_id = i.id AND p.received_at = i.received_at
WHERE i.event_type_version_id = $1 AND i.id < $2 AND i.erased_at IS NULL
ORDER BY i.id DESC
LIMIT $3
