-- A failed attempt: kept whole in delivery_attempts; the delivery waits
-- until $4 or, past its retry horizon ($9), is dead (and, while queue rows
-- are written for a deliverer of the release before, leaves its queue).
-- $11 is the rules' version the attempt used (NULL: unknown), kept on the
-- attempt and the delivery. Returns whether it died.
WITH attempt AS (
    INSERT INTO delivery_attempts (delivery_id, attempt, endpoint_id, status, latency_ms, error_class, error, answer, rules_version)
    VALUES ($1, $2, $3, $5, $6, $7, $8, $10, $11)
    ON CONFLICT DO NOTHING
), failed AS (
    UPDATE deliveries
    SET state = CASE WHEN created_at + $9::float8 * interval '1 second' <= now() THEN 'dead' ELSE 'pending' END,
        next_at = $4, attempts = $2, last_status = $5, latency_ms = $6, last_error = left($8, 1024),
        sent_rules_version = $11
    WHERE id = $1 AND state = 'pending'
    RETURNING state = 'dead' AS died
), dequeued AS (
    DELETE FROM pending_deliveries
    WHERE endpoint_id = $3 AND id = $1 AND (SELECT died FROM failed) AND (SELECT written FROM delivery_queue_rows WHERE singleton)
)
SELECT died FROM failed
