-- The next pending deliveries of one key of endpoint $1 after id $3, at
-- most $4: what an owner holding only the first few of a busy key reads
-- when those are done, and a parked key's at takeover. deliveries_endpoint
-- filters the key in the index: only the key's rows are read from the
-- table.
SELECT d.id, d.webhook_id, d.attempts, d.next_at, d.created_at, d.partition_key, d.inbox_id, d.payload, d.event_id,
       d.event_type, d.source, d.subject, d.event_time, d.traceparent, d.content_type, d.tenant_id::text, coalesce(d.rules_version, 0)
FROM deliveries d
WHERE d.endpoint_id = $1 AND d.partition_key = $2 AND d.id > $3 AND d.state = 'pending'
ORDER BY d.id
LIMIT $4
