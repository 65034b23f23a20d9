-- Whether the tables replaced by partitioned ones (migration 00009) still
-- hold a row within its horizon: duplicates for the key horizon ($1),
-- conflicts for the payload horizon ($2). Run only while they exist
-- (legacy_exists.sql).
SELECT EXISTS (SELECT 1 FROM inbox_duplicates_v1 WHERE received_at >= $1)
    OR EXISTS (SELECT 1 FROM inbox_conflicts_v1 WHERE received_at >= $2)
