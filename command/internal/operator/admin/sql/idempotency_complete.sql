-- The answer of a claimed key's request: its body, or for an answer that
-- held a secret shown once only the id it made (body NULL).
UPDATE admin_idempotency_keys
SET completed_at = now(), status = $3, content_type = $4, location = $5, body = $6, resource_id = $7
WHERE token_id = $1 AND key = $2 AND completed_at IS NULL
