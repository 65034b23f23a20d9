-- Endpoint $1's deliveries still pending among ids $2 (what the mark names
-- below it, or what its check found there), and those below its mark $3
-- with a queue row (a release before queued them: a retry of its own
-- writes no redo range); in id order, one may come twice.
SELECT d.id, d.webhook_id, d.attempts, d.next_at, d.created_at, d.partition_key, d.inbox_id, d.payload, d.event_id,
       d.event_type, d.source, d.subject, d.event_time, d.traceparent, d.content_type, d.tenant_id::text, coalesce(d.rules_version, 0)
FROM deliveries d
WHERE d.id = ANY ($2::bigint[]) AND d.endpoint_id = $1 AND d.state = 'pending'
UNION ALL
SELECT d.id, d.webhook_id, d.attempts, d.next_at, d.created_at, d.partition_key, d.inbox_id, d.payload, d.event_id,
       d.event_type, d.source, d.subject, d.event_time, d.traceparent, d.content_type, d.tenant_id::text, coalesce(d.rules_version, 0)
FROM pending_deliveries p JOIN deliveries d ON d.id = p.id
WHERE p.endpoint_id = $1 AND p.id < $3 AND d.state = 'pending'
ORDER BY 1
