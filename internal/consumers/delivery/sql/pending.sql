-- Endpoint $1's pending deliveries with ids in [$2, $3], in id order, at
-- most $4: read from the records themselves, from the endpoint's mark on
-- at takeover, then the ranges the fan-out announces; settled ones in the
-- range are passed over. The range is a row comparison so that only
-- deliveries_endpoint serves it, whatever plan is kept.
SELECT d.id, d.webhook_id, d.attempts, d.next_at, d.created_at, d.partition_key, d.inbox_id, d.payload, d.event_id,
       d.event_type, d.source, d.subject, d.event_time, d.traceparent, d.content_type, d.tenant_id::text
FROM deliveries d
WHERE (d.endpoint_id, d.id) >= ($1, $2) AND (d.endpoint_id, d.id) <= ($1, $3) AND d.endpoint_id = $1 AND d.state = 'pending'
ORDER BY d.endpoint_id, d.id
LIMIT $4
