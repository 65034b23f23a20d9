-- The newest version of one type ($1 tenant, $2 kind, $3 type).
SELECT t.id, t.resource_type, v.id, v.version, v.schema, v.object_id_at, v.event_time_at, v.event_time_format
FROM event_types t
JOIN event_type_versions v ON v.event_type_id = t.id
WHERE t.tenant_id = $1 AND t.source_kind = $2 AND t.event_type = $3
ORDER BY v.version DESC
LIMIT 1
