-- Mark a parked record handled; the lifecycle manager deletes it once
-- released longer ago than the payload horizon.
UPDATE cdc_parked SET released_at = now() WHERE id = $1 AND released_at IS NULL RETURNING id
