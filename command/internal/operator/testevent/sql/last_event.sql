-- The newest event of type $3 from a source of kind $2 among tenant $1's
-- newest 10,000 (inbox_tenant_received_at, backwards: the read is bounded
-- whatever the inbox holds), with its body while kept. An event with no
-- source row is a first-party one (its source is the API key): kind api.
SELECT i.event_id, coalesce(p.body, i.body)
FROM (
    SELECT id, received_at, source_id, event_type
    FROM inbox
    WHERE tenant_id = $1
    ORDER BY tenant_id DESC, received_at DESC
    LIMIT 10000
) recent
LEFT JOIN sources s ON s.id = recent.source_id
JOIN inbox i ON i.id = recent.id
LEFT JOIN inbox_payloads p ON p.inbox_id = i.id AND p.received_at = i.received_at
WHERE recent.event_type = $3 AND coalesce(s.kind, 'api') = $2 AND coalesce(p.body, i.body) IS NOT NULL
ORDER BY recent.received_at DESC
LIMIT 1
