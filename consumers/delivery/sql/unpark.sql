-- Parked deliveries that are their key's head after all (a head finished
-- while they were being parked) are due now. Reads only the endpoint's
-- parked rows.
UPDATE deliveries d
SET next_at = now()
WHERE d.endpoint_id = $1 AND d.state = 'pending' AND d.next_at = 'infinity'
  AND NOT EXISTS (SELECT 1 FROM deliveries e
                  WHERE e.endpoint_id = d.endpoint_id AND e.partition_key = d.partition_key
                    AND e.state = 'pending' AND e.id < d.id)
