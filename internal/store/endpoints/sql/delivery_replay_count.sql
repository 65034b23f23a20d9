-- How many deliveries of endpoint $1 created in [$2, $3) a replay would
-- send again (the delivered and dead ones; pending ones keep their
-- schedule), counting at most $4 + 1 so a wide window costs no more than
-- one replay's read. The dry run of delivery_replay.sql, on the same index.
SELECT count(*) FROM (
    SELECT 1 FROM deliveries
    WHERE endpoint_id = $1 AND created_at >= $2 AND created_at < $3 AND state <> 'pending'
    LIMIT $4 + 1
) w
