-- Whether an event's payload was purged on request (not merely expired).
SELECT erased_at IS NOT NULL FROM inbox WHERE id = $1
