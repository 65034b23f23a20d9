-- Claim a token's Idempotency-Key for a request ($1 token, $2 key, $3
-- operation, $4 salt, $5 the salted digest of the request): a row comes
-- back when the key is new to the token, or its row is older than the
-- keys' lifetime ($6), which counts as new (the lifecycle manager deletes
-- such rows, maybe not yet). No row: the key is taken, by a request in
-- flight or done.
INSERT INTO admin_idempotency_keys (token_id, key, operation, salt, request_sha256)
VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (token_id, key) DO UPDATE
    SET operation = EXCLUDED.operation, salt = EXCLUDED.salt, request_sha256 = EXCLUDED.request_sha256,
        created_at = now(), completed_at = NULL, status = NULL, content_type = NULL, location = NULL,
        body = NULL, resource_id = NULL
    WHERE admin_idempotency_keys.created_at < now() - make_interval(secs => $6)
RETURNING true
