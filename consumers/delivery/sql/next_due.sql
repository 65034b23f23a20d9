-- When the endpoint's earliest pending delivery is due, or its lease runs
-- out (NULL: none; parked ones wait for their head).
SELECT min(greatest(next_at, coalesce(leased_until, '-infinity'))) FROM deliveries
WHERE endpoint_id = $1 AND state = 'pending' AND next_at < 'infinity'
