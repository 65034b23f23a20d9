-- What a taken Idempotency-Key holds: the request it was claimed for (as a
-- salted digest) and, once that request ended, its answer.
SELECT salt, request_sha256, completed_at IS NOT NULL, coalesce(status, 0), coalesce(content_type, ''),
       coalesce(location, ''), body, coalesce(resource_id, '')
FROM admin_idempotency_keys
WHERE token_id = $1 AND key = $2
