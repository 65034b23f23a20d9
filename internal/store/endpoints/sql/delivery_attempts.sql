-- The failed attempts of deliveries $1, oldest first (the primary key
-- (delivery_id, attempt) finds them).
SELECT delivery_id, attempt, at, status, latency_ms, error_class, error, answer, coalesce(rules_version, 0)
FROM delivery_attempts
WHERE delivery_id = ANY($1::bigint[])
ORDER BY delivery_id, attempt
