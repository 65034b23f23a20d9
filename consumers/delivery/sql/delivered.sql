-- A 2xx: the delivery is done. Its figures stay on the row; the success
-- path writes no attempt row.
UPDATE deliveries
SET state = 'delivered', delivered_at = now(), last_status = $2, latency_ms = $3, last_error = NULL
WHERE id = $1 AND state = 'pending'
