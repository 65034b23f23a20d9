-- How many deliveries dead_retry.sql would send again with the same
-- arguments, counting at most $4 + 1: its dry run, with its WHERE clause.
SELECT count(*) FROM (
    SELECT 1 FROM deliveries d
    WHERE d.endpoint_id = $1 AND d.created_at >= $2 AND d.created_at < $3 AND d.state = 'dead'
      AND ($5::text IS NULL OR d.event_type = $5)
      AND ($6::text IS NULL OR (starts_with(d.event_type, $6) AND length(d.event_type) > length($6)))
      AND ($7::text IS NULL OR (SELECT a.error_class FROM delivery_attempts a WHERE a.delivery_id = d.id
                                ORDER BY a.attempt DESC LIMIT 1) = $7)
    LIMIT $4 + 1
) w
