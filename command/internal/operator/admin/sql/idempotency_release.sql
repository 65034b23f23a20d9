-- Free a claimed key whose request answered nothing worth repeating (a
-- server error, the request canceled): the next request with it runs.
DELETE FROM admin_idempotency_keys WHERE token_id = $1 AND key = $2 AND completed_at IS NULL
