-- Versions of a tenant's types ($1), optionally of one kind ($2) and type
-- ($3) ('' for any), deprecated ones only when $4, every version when $5
-- (otherwise the newest of each type), by kind, type and version.
SELECT t.id, v.id, t.tenant_id::text, t.source_kind, t.event_type, v.version, t.resource_type,
       v.object_id_at, v.event_time_at, v.event_time_format, v.compatible, v.checked, t.status,
       v.schema, v.created_at
FROM event_types t
JOIN event_type_versions v ON v.event_type_id = t.id
WHERE t.tenant_id = $1
  AND ($2 = '' OR t.source_kind = $2)
  AND ($3 = '' OR t.event_type = $3)
  AND ($4::bool OR t.status = 'active')
  AND ($5::bool OR v.version = (SELECT max(version) FROM event_type_versions WHERE event_type_id = t.id))
ORDER BY t.source_kind, t.event_type, v.version
