-- A new link: its secret's digest, never the secret.
INSERT INTO portal_links (tenant_id, scope, access, secret_sha256, session_seconds, created_by, expires_at)
VALUES ($1, $2, $3, $4, $5, $6, now() + make_interval(secs => $7))
RETURNING id::text, tenant_id::text, scope, access, session_seconds, created_at, expires_at
