-- End an endpoint's failure streak (a 2xx), unless it has none. Returns
-- its tenant (NULL: the deployment's endpoint) and when the streak began:
-- the business key of the recovery's operational event.
UPDATE endpoints e SET failing_since = NULL
FROM (SELECT id, failing_since FROM endpoints WHERE id = $1 AND failing_since IS NOT NULL FOR UPDATE) o
WHERE e.id = o.id
RETURNING e.tenant_id::text, o.failing_since
