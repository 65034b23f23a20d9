-- Disable an endpoint for reason (gone, failing), unless disabled already.
-- Returns its tenant, the disabling's moment and the failure streak's
-- start: an operational event's business key and body.
UPDATE endpoints SET disabled_at = now(), disabled_reason = $2, updated_at = now()
WHERE id = $1 AND disabled_at IS NULL
RETURNING tenant_id::text, disabled_at, failing_since
