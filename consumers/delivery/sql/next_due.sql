-- When the endpoint's earliest pending delivery not leased is due (NULL:
-- none; parked ones wait for their head, leased ones for their sender or,
-- a sender gone, the poll). In next_at order on deliveries_due, passing only
-- the few leased rows: never a scan of the backlog.
SELECT next_at FROM deliveries
WHERE endpoint_id = $1 AND state = 'pending' AND next_at < 'infinity'
  AND (leased_until IS NULL OR leased_until <= now())
ORDER BY next_at
LIMIT 1
