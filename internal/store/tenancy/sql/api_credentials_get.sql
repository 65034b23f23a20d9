-- A source's kind and its sealed API credentials (NULL when it has none).
SELECT s.kind, c.key_id, c.ciphertext
FROM sources s LEFT JOIN source_api_credentials c ON c.source_id = s.id
WHERE s.id = $1
