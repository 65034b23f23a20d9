-- One batch of event keys past the key horizon, with what waits on them
-- (an event still waiting for its object after that long never will be).
-- received_at has a BRIN index and rows are appended in time order, so the
-- scan reads the oldest blocks first and stops at the LIMIT.
WITH gone AS (
    DELETE FROM inbox WHERE id IN (SELECT id FROM inbox WHERE received_at < $1 LIMIT $2)
    RETURNING id
), waiting AS (
    DELETE FROM inbox_waiting w USING gone WHERE w.inbox_id = gone.id
)
SELECT count(*) FROM gone
