-- The tenant and api source of an API key that is not revoked, found by the
-- key's SHA-256.
SELECT k.tenant_id::text, s.id::text, s.account
FROM api_keys k
JOIN sources s ON s.id = k.source_id
WHERE k.key_sha256 = $1 AND k.revoked_at IS NULL AND s.disabled_at IS NULL
