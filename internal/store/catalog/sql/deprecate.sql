-- Marks one type ($1 tenant, $2 kind, $3 type) deprecated.
UPDATE event_types SET status = 'deprecated', updated_at = now()
WHERE tenant_id = $1 AND source_kind = $2 AND event_type = $3
RETURNING id
