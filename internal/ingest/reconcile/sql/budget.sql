-- Take one request from a source's API budget for the current clock hour
-- ($2 per hour, shared by every instance). No row: the budget is spent.
INSERT INTO reconcile_budgets AS b (source_id, hour, used, budget) VALUES ($1, date_trunc('hour', now()), 1, $2)
ON CONFLICT (source_id) DO UPDATE
    SET used = CASE WHEN b.hour = EXCLUDED.hour THEN b.used + 1 ELSE 1 END, hour = EXCLUDED.hour, budget = $2
    WHERE b.hour <> EXCLUDED.hour OR b.used < $2
RETURNING used
