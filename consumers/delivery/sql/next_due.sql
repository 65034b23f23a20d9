-- When the endpoint's earliest pending delivery is due (NULL: none).
SELECT min(next_at) FROM deliveries WHERE endpoint_id = $1 AND state = 'pending' AND next_at < 'infinity'
