-- An endpoint's figures, each read through an index and bounded: the
-- newest $2 deliveries (deliveries_endpoint_created, backwards) for the
-- delivered and dead counts, at most $2 pending ones (pending_deliveries, oldest first) for
-- the backlog, and the failed attempts of those (the primary key of
-- delivery_attempts) for the last error.
WITH recent AS (
    SELECT id, state, delivered_at FROM deliveries
    WHERE endpoint_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2
), pending AS (
    SELECT d.id, d.created_at FROM pending_deliveries p JOIN deliveries d ON d.id = p.id
    WHERE p.endpoint_id = $1 ORDER BY p.id LIMIT $2 + 1
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
