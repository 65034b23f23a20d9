-- A batch of 2xx outcomes ($1-$5, and $7 the rules' version each send
-- used, 0: unknown), and the endpoints' figures per minute
-- ($6, JSON rows of delivery_minutes' columns). Each delivery is done, its
-- figures on its row: a heap-only update (no index covers them), the
-- success path's only write. While queue rows are written (a deliverer of
-- the release before runs: migration 00038) its queue row goes too. The
-- figures are added to their minute's row (an endpoint deleted meanwhile
-- has none).
WITH done AS (
    UPDATE deliveries d
    SET state = 'delivered', delivered_at = o.at, last_status = o.status, latency_ms = o.latency_ms,
        attempts = o.attempt, last_error = NULL, sent_rules_version = nullif(o.rules_version, 0)
    FROM unnest($1::bigint[], $2::int[], $3::int[], $4::int[], $5::timestamptz[], $7::bigint[])
         AS o(id, status, latency_ms, attempt, at, rules_version)
    WHERE d.id = o.id AND d.state = 'pending'
    RETURNING d.endpoint_id, d.id
), dequeued AS (
    DELETE FROM pending_deliveries p USING done
    WHERE (SELECT written FROM delivery_queue_rows WHERE singleton) AND p.endpoint_id = done.endpoint_id AND p.id = done.id
), figures AS (
    INSERT INTO delivery_minutes AS m (endpoint_id, minute, attempts, delivered, failed, answered, latency_ms_sum,
                                       le_50, le_100, le_250, le_500, le_1000, le_2500, le_5000, le_10000, le_inf)
    SELECT f.endpoint_id, f.minute, f.attempts, f.delivered, f.failed, f.answered, f.latency_ms_sum,
           f.le_50, f.le_100, f.le_250, f.le_500, f.le_1000, f.le_2500, f.le_5000, f.le_10000, f.le_inf
    FROM jsonb_to_recordset(coalesce($6::jsonb, '[]')) AS f(endpoint_id uuid, minute timestamptz, attempts int, delivered int,
         failed int, answered int, latency_ms_sum bigint, le_50 int, le_100 int, le_250 int, le_500 int, le_1000 int,
         le_2500 int, le_5000 int, le_10000 int, le_inf int)
    CROSS JOIN LATERAL (SELECT 1 FROM endpoints e WHERE e.id = f.endpoint_id LIMIT 1) e
    ON CONFLICT (endpoint_id, minute) DO UPDATE
    SET attempts = m.attempts + excluded.attempts, delivered = m.delivered + excluded.delivered,
        failed = m.failed + excluded.failed, answered = m.answered + excluded.answered,
        latency_ms_sum = m.latency_ms_sum + excluded.latency_ms_sum,
        le_50 = m.le_50 + excluded.le_50, le_100 = m.le_100 + excluded.le_100, le_250 = m.le_250 + excluded.le_250,
        le_500 = m.le_500 + excluded.le_500, le_1000 = m.le_1000 + excluded.le_1000, le_2500 = m.le_2500 + excluded.le_2500,
        le_5000 = m.le_5000 + excluded.le_5000, le_10000 = m.le_10000 + excluded.le_10000, le_inf = m.le_inf + excluded.le_inf
)
SELECT count(*) FROM done
