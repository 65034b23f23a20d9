-- Tenant $1's latest published events, newest first, at most $2, with
-- their bodies (NULL when no longer kept or over $3 bytes): what a new
-- transformation is tried on when no sample is given. The tenant's
-- (tenant_id, received_at) index serves it.
SELECT i.event_id, coalesce(s.kind, '') || '.' || i.event_type, i.source_id::text, i.object_id, i.event_time,
       i.source_account, CASE WHEN octet_length(coalesce(p.body, i.body)) <= $3 THEN coalesce(p.body, i.body) END
FROM inbox i
LEFT JOIN sources s ON s.id = i.source_id
LEFT JOIN inbox_payloads p ON p.inbox_id = i.id AND p.received_at = i.received_at
WHERE i.tenant_id = $1 AND i.status = 'published' AND i.erased_at IS NULL
ORDER BY i.received_at DESC
LIMIT $2
