-- Disable an endpoint for reason (gone, failing), unless disabled already.
UPDATE endpoints SET disabled_at = now(), disabled_reason = $2, updated_at = now()
WHERE id = $1 AND disabled_at IS NULL
RETURNING tenant_id::text
