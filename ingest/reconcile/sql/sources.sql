-- Enabled sources that hold API credentials: those reconciliation can ask.
SELECT c.source_id::text FROM source_api_credentials c JOIN sources s ON s.id = c.source_id
WHERE s.disabled_at IS NULL ORDER BY c.source_id
