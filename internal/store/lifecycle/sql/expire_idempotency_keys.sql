-- One batch of the admin API's Idempotency-Keys claimed longer ago than
-- their horizon ($1), in flight or done: the API answers such a key as new
-- already. The index admin_idempotency_keys_created_at (00027) finds them.
WITH gone AS (
    DELETE FROM admin_idempotency_keys WHERE (token_id, key) IN (
        SELECT token_id, key FROM admin_idempotency_keys WHERE created_at < $1 LIMIT $2)
    RETURNING 1
)
SELECT count(*) FROM gone
