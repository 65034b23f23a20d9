-- One batch of dead letters replayed longer ago than the horizon ($1). A
-- dead letter not replayed is never touched: an operator must still see
-- it. The partial index on replayed_at holds replayed ones only.
WITH gone AS (
    DELETE FROM dead_letters WHERE id IN (SELECT id FROM dead_letters WHERE replayed_at < $1 LIMIT $2)
    RETURNING 1
)
SELECT count(*) FROM gone
