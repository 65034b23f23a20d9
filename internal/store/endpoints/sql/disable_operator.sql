-- An operator disables a tenant's endpoint (reason operator; a disabled
-- one keeps its moment). Returns its tenant, the disabling's moment,
-- whether it was enabled before (only then is it told) and its failure
-- streak's start.
UPDATE endpoints e SET disabled_at = coalesce(e.disabled_at, now()), disabled_reason = 'operator', updated_at = now()
FROM (SELECT id, disabled_at FROM endpoints WHERE id = $1 AND tenant_id IS NOT NULL FOR UPDATE) o
WHERE e.id = o.id
RETURNING e.tenant_id::text, e.disabled_at, o.disabled_at IS NULL, e.failing_since
