-- Endpoint $1's pending deliveries with ids in [$2, $3], in id order, at
-- most $4: the narrow queue rows (their primary key is the order) and the
-- records they stand for.
SELECT d.id, d.webhook_id, d.attempts, d.next_at, d.created_at, d.partition_key, d.inbox_id, d.payload, d.event_id,
       d.event_type, d.source, d.subject, d.event_time, d.traceparent, d.content_type, d.tenant_id::text
FROM pending_deliveries p
JOIN deliveries d ON d.id = p.id
WHERE p.endpoint_id = $1 AND p.id BETWEEN $2 AND $3 AND d.state = 'pending'
ORDER BY p.id
LIMIT $4
