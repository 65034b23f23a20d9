-- A tenant's catalogue as ingest reads it ($1 tenant): the newest version of
-- each type, without its schema (compiled schemas are cached by version id;
-- the text is read only on a miss, schema.sql). Deprecated types are here
-- too: they keep validating and publishing.
SELECT DISTINCT ON (t.id) t.source_kind, t.event_type, t.resource_type, v.id, v.version,
       v.object_id_at, v.event_time_at, v.event_time_format
FROM event_types t
JOIN event_type_versions v ON v.event_type_id = t.id
WHERE t.tenant_id = $1
ORDER BY t.id, v.version DESC
