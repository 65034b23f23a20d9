-- Claim heads for one attempt each: a lease (next_at in the future) keeps
-- other deliverers off them, and a deliverer killed mid-request leaves a
-- lease that runs out, so the delivery is sent again (at least once).
UPDATE deliveries d
SET next_at = now() + $2::float8 * interval '1 second', attempts = d.attempts + 1
WHERE d.id = ANY($1::bigint[]) AND d.state = 'pending' AND d.next_at <= now()
RETURNING d.id, d.webhook_id, d.attempts, d.created_at, d.partition_key, d.inbox_id, d.payload, d.event_id,
          d.event_type, d.source, d.subject, d.event_time, d.traceparent, d.content_type, d.tenant_id::text
