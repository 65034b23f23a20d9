-- Delivery $1 back to pending, due now (delivery.retry), queued for its
-- endpoint's owner, who is told at commit; its tenant, or no row when there
-- is no such delivery.
WITH retried AS (
    UPDATE deliveries SET state = 'pending', next_at = now() WHERE id = $1
    RETURNING id, endpoint_id, tenant_id
), queued AS (
    INSERT INTO pending_deliveries (endpoint_id, id) SELECT endpoint_id, id FROM retried ON CONFLICT DO NOTHING
)
SELECT tenant_id::text, pg_notify('sluice_deliveries', endpoint_id::text || ' ' || id || ' ' || id) IS NULL FROM retried
