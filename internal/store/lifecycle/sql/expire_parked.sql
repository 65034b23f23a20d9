-- One batch of parked relay records released longer ago than the horizon
-- ($1). One not released is never touched: an operator must still see it.
-- The partial index on released_at holds released ones only.
WITH gone AS (
    DELETE FROM cdc_parked WHERE id IN (SELECT id FROM cdc_parked WHERE released_at < $1 LIMIT $2)
    RETURNING 1
)
SELECT count(*) FROM gone
