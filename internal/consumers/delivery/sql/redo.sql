-- The ranges retries and replays of endpoint $1 moved back to pending:
-- the deliveries pending in them (at most $2 a range, in id order), and
-- each range holding none is deleted, everything it moved being settled
-- again. A retry committed after this read writes a range of its own.
WITH r AS (
    SELECT id, lo, hi FROM delivery_redos WHERE endpoint_id = $1
), p AS (
    SELECT r.id AS redo, d.* FROM r CROSS JOIN LATERAL (
        SELECT d.id, d.webhook_id, d.attempts, d.next_at, d.created_at, d.partition_key, d.inbox_id, d.payload, d.event_id,
               d.event_type, d.source, d.subject, d.event_time, d.traceparent, d.content_type, d.tenant_id::text, coalesce(d.rules_version, 0) AS rules_version
        FROM deliveries d
        WHERE (d.endpoint_id, d.id) >= ($1, r.lo) AND (d.endpoint_id, d.id) <= ($1, r.hi) AND d.endpoint_id = $1
          AND d.state = 'pending'
        ORDER BY d.endpoint_id, d.id LIMIT $2
    ) d
), gone AS (
    DELETE FROM delivery_redos x USING r WHERE x.id = r.id AND NOT EXISTS (SELECT 1 FROM p WHERE p.redo = r.id)
)
SELECT id, webhook_id, attempts, next_at, created_at, partition_key, inbox_id, payload, event_id,
       event_type, source, subject, event_time, traceparent, content_type, tenant_id, rules_version
FROM p ORDER BY id
