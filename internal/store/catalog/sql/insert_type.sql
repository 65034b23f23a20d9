-- A new type of a tenant, counted against its quota by the caller under
-- lock_tenant.sql. Returns its id.
INSERT INTO event_types (tenant_id, source_kind, event_type, resource_type)
SELECT $1, $2, $3, $4
WHERE (SELECT count(*) FROM event_types WHERE tenant_id = $1) < $5
RETURNING id
