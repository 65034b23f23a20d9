-- A new session; sessions ended over a day ago are deleted on the way
-- (a few rows per sign-in, by the expires_at index), so the table stays
-- the size of the sessions in use.
WITH aged AS (
    DELETE FROM console_sessions WHERE id IN (
        SELECT id FROM console_sessions WHERE expires_at < now() - interval '1 day' LIMIT 100)
)
INSERT INTO console_sessions (id, token_id, sealed_token, csrf, expires_at) VALUES ($1, $2, $3, $4, $5)
