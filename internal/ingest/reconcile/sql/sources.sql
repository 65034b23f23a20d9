-- Enabled sources that hold API credentials, with when the schedule last
-- began a run of each (NULL: never): those reconciliation can ask.
SELECT c.source_id::text, (SELECT max(r.started_at) FROM reconcile_runs r WHERE r.source_id = c.source_id AND r.automatic)
FROM source_api_credentials c JOIN sources s ON s.id = c.source_id
WHERE s.disabled_at IS NULL ORDER BY c.source_id
