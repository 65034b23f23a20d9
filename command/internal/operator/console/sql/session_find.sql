-- A live session of a live token: neither revoked nor expired.
SELECT s.token_id::text, s.sealed_token, s.csrf, s.expires_at, t.role, coalesce(t.tenant_id::text, ''), coalesce(t.portal_scope, '')
FROM console_sessions s JOIN admin_tokens t ON t.id = s.token_id
WHERE s.id = $1 AND s.revoked_at IS NULL AND s.expires_at > now()
  AND t.revoked_at IS NULL AND (t.expires_at IS NULL OR t.expires_at > now())
