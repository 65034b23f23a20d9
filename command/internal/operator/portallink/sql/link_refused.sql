-- Why a link was not claimed: used, or expired (no row: no such link).
SELECT id::text, tenant_id::text, coalesce(created_by::text, ''), used_at IS NOT NULL
FROM portal_links WHERE secret_sha256 = $1
