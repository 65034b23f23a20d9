-- A batch of 2xx outcomes: each delivery is done, its figures on its row
-- (a heap-only update: no index covers them) and its queue row gone. The
-- success path writes no attempt row.
WITH done AS (
    UPDATE deliveries d
    SET state = 'delivered', delivered_at = o.at, last_status = o.status, latency_ms = o.latency_ms,
        attempts = o.attempt, last_error = NULL
    FROM unnest($1::bigint[], $2::int[], $3::int[], $4::int[], $5::timestamptz[]) AS o(id, status, latency_ms, attempt, at)
    WHERE d.id = o.id AND d.state = 'pending'
    RETURNING d.endpoint_id, d.id
)
DELETE FROM pending_deliveries p USING done WHERE p.endpoint_id = done.endpoint_id AND p.id = done.id
