-- Endpoint $1's pending deliveries with ids in [$2, $3], in id order, at
-- most $4: read from the records themselves, from the endpoint's mark on
-- at takeover, then the ranges the fan-out announces; settled ones in the
-- range are passed over. The range is a row comparison so that only
-- deliveries_endpoint serves it, whatever plan is kept.
--
-- With $5, each event's body comes along when its inbox row is there, the
-- endpoint's tenant's, and the body at most 64 KiB (or gone: the last
-- column says the row was found): what is about to be sent needs no second
-- statement. The inbox row is found by its id alone, the tenant compared
-- after, so only its primary key serves.
SELECT d.id, d.webhook_id, d.attempts, d.next_at, d.created_at, d.partition_key, d.inbox_id,
       CASE WHEN d.inbox_id IS NULL THEN d.payload WHEN b.tenant_id = d.tenant_id THEN b.body END, d.event_id,
       d.event_type, d.source, d.subject, d.event_time, d.traceparent, d.content_type, d.tenant_id::text, coalesce(d.rules_version, 0),
       coalesce(b.tenant_id = d.tenant_id, false)
FROM deliveries d
LEFT JOIN LATERAL (
    SELECT i.tenant_id, coalesce(p.body, i.body) AS body
    FROM inbox i
    LEFT JOIN inbox_payloads p ON p.inbox_id = i.id AND p.received_at = i.received_at
    WHERE $5::boolean AND i.id = d.inbox_id AND coalesce(octet_length(coalesce(p.body, i.body)), 0) <= 65536
) b ON true
WHERE (d.endpoint_id, d.id) >= ($1, $2) AND (d.endpoint_id, d.id) <= ($1, $3) AND d.endpoint_id = $1 AND d.state = 'pending'
ORDER BY d.endpoint_id, d.id
LIMIT $4
