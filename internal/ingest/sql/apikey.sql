-- The tenant, its rate override (if any) and the api source of an API key
-- that is not revoked, found by the key's SHA-256.
SELECT k.tenant_id::text, s.id::text, s.account, l.rate, l.burst
FROM api_keys k
JOIN sources s ON s.id = k.source_id
LEFT JOIN tenant_limits l ON l.tenant_id = k.tenant_id
WHERE k.key_sha256 = $1 AND k.revoked_at IS NULL AND s.disabled_at IS NULL
