-- Delivery $1 back to pending, due now (delivery.retry); its tenant, or no
-- row when there is no such delivery.
UPDATE deliveries SET state = 'pending', next_at = now() WHERE id = $1 RETURNING tenant_id::text
