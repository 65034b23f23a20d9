-- An endpoint's figures, each read through an index and bounded: the
-- newest $2 deliveries (deliveries_endpoint_created, backwards) for the
-- delivered and dead counts, at most $2 pending ones of each place they
-- wait (from its mark on, deliveries_endpoint; below it, those its
-- exceptions name and those retries and replays moved back) for the
-- backlog, and the failed attempts of those (the primary key of
-- delivery_attempts) for the last error.
WITH recent AS (
    SELECT id, state, delivered_at FROM deliveries
    WHERE endpoint_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2
), mark AS (
    SELECT low, parked_ids, parked_keys, parked_from FROM delivery_marks WHERE endpoint_id = $1
), pending AS (
    (SELECT d.id, d.created_at FROM deliveries d
     WHERE d.endpoint_id = $1 AND d.id >= coalesce((SELECT low FROM mark), 0) AND d.state = 'pending'
     ORDER BY d.id LIMIT $2 + 1)
    UNION
    (SELECT d.id, d.created_at FROM deliveries d
     WHERE d.id = ANY (coalesce((SELECT parked_ids FROM mark), '{}')) AND d.endpoint_id = $1 AND d.state = 'pending')
    UNION
    (SELECT d.id, d.created_at FROM mark CROSS JOIN LATERAL unnest(mark.parked_keys, mark.parked_from) AS k(key, from_id)
     CROSS JOIN LATERAL (SELECT d.id, d.created_at FROM deliveries d
                         WHERE d.endpoint_id = $1 AND d.partition_key = k.key AND d.id >= k.from_id AND d.state = 'pending'
                         ORDER BY d.id LIMIT $2 + 1) d)
    UNION
    (SELECT d.id, d.created_at FROM delivery_redos r
     CROSS JOIN LATERAL (SELECT d.id, d.created_at FROM deliveries d
                         WHERE d.endpoint_id = $1 AND d.id BETWEEN r.lo AND r.hi AND d.state = 'pending'
                         ORDER BY d.id LIMIT $2 + 1) d
     WHERE r.endpoint_id = $1)
), failed AS (
    SELECT a.at, a.status, a.error_class, a.error FROM delivery_attempts a
    WHERE a.delivery_id IN (SELECT id FROM recent UNION SELECT id FROM pending)
    ORDER BY a.at DESC LIMIT 1
)
SELECT (SELECT count(*) FROM recent)::int,
       (SELECT count(*) FROM recent WHERE state = 'delivered')::int,
       (SELECT count(*) FROM recent WHERE state = 'dead')::int,
       (SELECT count(*) FROM pending)::int,
       (SELECT extract(epoch FROM now() - min(created_at)) FROM pending)::float8,
       (SELECT max(delivered_at) FROM recent),
       (SELECT at FROM failed), (SELECT status FROM failed), (SELECT error_class FROM failed), (SELECT error FROM failed)
