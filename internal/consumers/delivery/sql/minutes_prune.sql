-- Endpoint $1's figures per minute older than the console reads (8 days).
DELETE FROM delivery_minutes WHERE endpoint_id = $1 AND minute < now() - interval '8 days'
