-- One inbox row, if the scope ($2, NULL: unscoped) sees it, with its
-- source's kind (how it was verified).
SELECT i.id, i.tenant_id, i.source_id, i.source_account, i.event_id, i.event_type, i.object_type, i.object_id,
       i.event_time, i.received_at, i.status, i.reason, i.erased_at, coalesce(s.kind, '')
FROM inbox i
LEFT JOIN sources s ON s.id = i.source_id
WHERE i.id = $1 AND ($2::uuid IS NULL OR i.tenant_id = $2::uuid)
