-- A new link: its secret's digest, never the secret. Links expired over a
-- day ago are deleted on the way (a few rows per minting, by the expires_at
-- index), so the table stays the size of the links in use.
WITH aged AS (
    DELETE FROM portal_links WHERE id IN (
        SELECT id FROM portal_links WHERE expires_at < now() - interval '1 day' LIMIT 100)
)
INSERT INTO portal_links (tenant_id, scope, access, secret_sha256, session_seconds, created_by, expires_at)
VALUES ($1, $2, $3, $4, $5, $6, now() + make_interval(secs => $7))
RETURNING id::text, tenant_id::text, scope, access, session_seconds, created_at, expires_at
