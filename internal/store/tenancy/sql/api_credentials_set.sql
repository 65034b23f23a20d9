-- Store (or replace) a source's sealed API credentials; no row when the
-- source does not exist or is the tenant's api source.
INSERT INTO source_api_credentials (source_id, key_id, ciphertext)
SELECT id, $2, $3 FROM sources WHERE id = $1 AND kind <> 'api'
ON CONFLICT (source_id) DO UPDATE SET key_id = EXCLUDED.key_id, ciphertext = EXCLUDED.ciphertext, updated_at = now()
RETURNING source_id
