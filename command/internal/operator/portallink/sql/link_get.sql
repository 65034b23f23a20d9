-- One link's record.
SELECT id::text, tenant_id::text, scope, access, session_seconds, created_at, expires_at, used_at, coalesce(token_id::text, '')
FROM portal_links WHERE id = $1
