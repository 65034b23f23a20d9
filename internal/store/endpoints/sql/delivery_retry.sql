-- Delivery $1 back to pending, due now (delivery.retry): its id is written
-- as a range of delivery_redos, which its endpoint's owner reads whatever
-- its mark (migration 00038) and deletes once the delivery is settled
-- again, and the owner is told at commit; a queue row is written besides
-- while a deliverer of the release before runs. Returns its tenant, or no
-- row when there is no such delivery.
WITH retried AS (
    UPDATE deliveries SET state = 'pending', next_at = now() WHERE id = $1
    RETURNING id, endpoint_id, tenant_id
), redo AS (
    INSERT INTO delivery_redos (endpoint_id, lo, hi) SELECT endpoint_id, id, id FROM retried
), queued AS (
    INSERT INTO pending_deliveries (endpoint_id, id)
    SELECT endpoint_id, id FROM retried WHERE (SELECT written FROM delivery_queue_rows WHERE singleton)
    ON CONFLICT DO NOTHING
)
SELECT tenant_id::text, pg_notify('sluice_deliveries', endpoint_id::text || ' ' || id || ' ' || id) IS NULL FROM retried
