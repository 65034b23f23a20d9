-- A delivery as operators see it (never its payload); the caller appends
-- WHERE, ORDER BY and LIMIT.
SELECT d.id, d.endpoint_id::text, d.tenant_id::text, d.webhook_id, d.event_id, d.event_type, d.partition_key, d.state,
       d.attempts, d.next_at, d.created_at, d.accepted_at, d.delivered_at, d.last_status, d.last_error, d.latency_ms,
       d.inbox_id, d.rules_version, d.sent_rules_version, d.topic, d.partition, d."offset"
FROM deliveries d
