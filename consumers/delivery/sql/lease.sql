-- Claim heads for one attempt each: a lease keeps other deliverers off
-- them, and a deliverer killed mid-request leaves a lease that runs out, so
-- the delivery is sent again (at least once). Only unindexed columns
-- change: a heap-only update.
UPDATE deliveries d
SET leased_until = now() + $2::float8 * interval '1 second', attempts = d.attempts + 1
WHERE d.id = ANY($1::bigint[]) AND d.state = 'pending' AND d.next_at <= now()
  AND (d.leased_until IS NULL OR d.leased_until <= now())
RETURNING d.id, d.webhook_id, d.attempts, d.created_at, d.partition_key, d.inbox_id, d.payload, d.event_id,
          d.event_type, d.source, d.subject, d.event_time, d.traceparent, d.content_type, d.tenant_id::text
