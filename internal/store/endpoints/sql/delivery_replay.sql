-- The delivered and dead deliveries of endpoint $1 created in [$2, $3),
-- oldest first, at most $4, back to pending, due now (endpoint.replay).
-- The range of their ids is written to delivery_redos, which the
-- endpoint's owner reads whatever its mark (migration 00038), and the
-- owner is told it at commit; queue rows are written besides while a
-- deliverer of the release before runs. Pending ones are left to their
-- schedule: one may be on its way now. Returns how many moved and the
-- creation time of the last one (where a capped replay goes on from). The
-- index deliveries_endpoint_created finds the window in order.
WITH chosen AS (
    SELECT id, created_at FROM deliveries
    WHERE endpoint_id = $1 AND created_at >= $2 AND created_at < $3 AND state <> 'pending'
    ORDER BY created_at, id
    LIMIT $4
    FOR UPDATE
), moved AS (
    UPDATE deliveries d SET state = 'pending', next_at = now() FROM chosen c WHERE d.id = c.id RETURNING d.id
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
