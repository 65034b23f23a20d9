-- Claims a link for its one use: only an unused, unexpired one is claimed,
-- and the row lock makes a concurrent second use find it used.
UPDATE portal_links SET used_at = now()
WHERE secret_sha256 = $1 AND used_at IS NULL AND expires_at > now()
RETURNING id::text, tenant_id::text, scope, access, session_seconds, created_at, expires_at
