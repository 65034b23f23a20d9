-- One set of sealed API credentials per key id (see sealed_probe.sql).
SELECT DISTINCT ON (key_id) key_id, source_id::text, ciphertext
FROM source_api_credentials
ORDER BY key_id, updated_at DESC
