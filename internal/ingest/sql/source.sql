-- A source, its settings, its tenant's rate override (if any), and its
-- secrets that have not expired.
SELECT s.tenant_id::text, s.kind, s.account, s.disabled_at IS NOT NULL,
       s.tolerance_seconds, s.max_body_bytes, s.hmac, s.ip_allowlist,
       l.rate, l.burst,
       ss.key_id, ss.ciphertext
FROM sources s
LEFT JOIN tenant_limits l ON l.tenant_id = s.tenant_id
LEFT JOIN source_secrets ss
       ON ss.source_id = s.id AND (ss.expires_at IS NULL OR ss.expires_at > now())
WHERE s.id = $1
ORDER BY ss.created_at DESC
