-- The sends of the given idempotency keys (an effect's e-mail or alert) to
-- the dispatcher's service, with the notifications record that carried
-- each: those the dispatcher of before made itself, and the deliveries to a
-- deployment's own endpoint, whose webhook-id is the key (found through
-- the unique key on endpoint and webhook-id, one probe per key).
SELECT idempotency_key, consumer_group, topic, partition, "offset", status, sent_at
FROM dispatch_delivered WHERE idempotency_key = ANY($1)
UNION ALL
SELECT d.webhook_id, e.deployment || '.dispatch', d.topic, d.partition, d."offset", d.last_status, d.delivered_at
FROM endpoints e
JOIN deliveries d ON d.endpoint_id = e.id AND d.webhook_id = ANY($1)
WHERE e.tenant_id IS NULL AND d.state = 'delivered'
