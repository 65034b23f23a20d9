-- The tenant of delivery $1 (the admin API's owner look-up).
SELECT tenant_id::text FROM deliveries WHERE id = $1
