-- Verifications not final $2 after their last event (the provider retries
-- for 24 h, then gives up).
SELECT verification_id FROM verifications
WHERE source_id = $1 AND NOT final AND version_time < now() - $2::interval
