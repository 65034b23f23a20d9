-- Endpoint $1's pending deliveries with ids in [$2, $3], in id order, at
-- most $4: read from the records themselves (deliveries_endpoint), from
-- the endpoint's mark on at takeover, then the ranges the fan-out
-- announces. Settled ones in the range are passed over.
SELECT d.id, d.webhook_id, d.attempts, d.next_at, d.created_at, d.partition_key, d.inbox_id, d.payload, d.event_id,
       d.event_type, d.source, d.subject, d.event_time, d.traceparent, d.content_type, d.tenant_id::text
FROM deliveries d
WHERE d.endpoint_id = $1 AND d.id BETWEEN $2 AND $3 AND d.state = 'pending'
ORDER BY d.id
LIMIT $4
