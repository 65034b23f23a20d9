-- The bodies of deliveries whose event has an inbox row, as received.
SELECT i.id, coalesce(p.body, i.body)
FROM inbox i
LEFT JOIN inbox_payloads p ON p.inbox_id = i.id AND p.received_at = i.received_at
WHERE i.id = ANY($1::bigint[]) AND i.tenant_id = $2::uuid
