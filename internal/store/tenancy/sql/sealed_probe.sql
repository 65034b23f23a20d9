-- One live secret per key id: enough to prove the key ring opens every key
-- the stored secrets were sealed with.
SELECT DISTINCT ON (key_id) key_id, source_id::text, ciphertext
FROM source_secrets
WHERE expires_at IS NULL OR expires_at > now()
ORDER BY key_id, created_at DESC
