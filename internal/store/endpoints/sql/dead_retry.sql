-- The dead deliveries of endpoint $1 created in [$2, $3), of event type $5
-- (NULL: any) or under prefix $6 (a pattern's "stripe.invoice." part;
-- NULL: any), whose last failed attempt's error class is $7 (NULL: any),
-- oldest first, at most $4, back to pending, due now (endpoint.retry_dead).
-- As delivery_replay.sql: the range of their ids goes to delivery_redos,
-- which the endpoint's owner reads whatever its mark, and the owner is told
-- at commit; queue rows besides while a deliverer of the release before
-- runs. Returns how many moved and the creation time of the last one.
-- dead_retry_count.sql is its dry run: keep their WHERE clauses the same.
WITH chosen AS (
    SELECT d.id, d.created_at FROM deliveries d
    WHERE d.endpoint_id = $1 AND d.created_at >= $2 AND d.created_at < $3 AND d.state = 'dead'
      AND ($5::text IS NULL OR d.event_type = $5)
      AND ($6::text IS NULL OR (starts_with(d.event_type, $6) AND length(d.event_type) > length($6)))
      AND ($7::text IS NULL OR (SELECT a.error_class FROM delivery_attempts a WHERE a.delivery_id = d.id
                                ORDER BY a.attempt DESC LIMIT 1) = $7)
    ORDER BY d.created_at, d.id
    LIMIT $4
    FOR UPDATE
), moved AS (
    UPDATE deliveries d SET state = 'pending', next_at = now() FROM chosen c WHERE d.id = c.id AND d.state = 'dead' RETURNING d.id
), span AS (
    SELECT min(id) AS lo, max(id) AS hi FROM moved HAVING count(*) > 0
), redo AS (
    INSERT INTO delivery_redos (endpoint_id, lo, hi) SELECT $1, lo, hi FROM span
), queued AS (
    INSERT INTO pending_deliveries (endpoint_id, id)
    SELECT $1, id FROM moved WHERE (SELECT written FROM delivery_queue_rows WHERE singleton)
    ON CONFLICT DO NOTHING
)
SELECT (SELECT count(*) FROM moved), (SELECT max(created_at) FROM chosen),
       (SELECT count(pg_notify('sluice_deliveries', $1::text || ' ' || lo || ' ' || hi)) FROM span)
