-- The tenant of delivery $1 (the admin API's owner look-up): none for a
-- delivery to a deployment's own endpoint, which only an operator sees.
SELECT CASE WHEN e.tenant_id IS NULL THEN '' ELSE d.tenant_id::text END
FROM deliveries d JOIN endpoints e ON e.id = d.endpoint_id WHERE d.id = $1
