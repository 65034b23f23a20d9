-- A body too large for Kafka, loaded from the inbox row the record names
-- (same tenant only). Always one row: whether the event key is still kept,
-- whether its payload was erased on request, the body while it is kept
-- (its payload partition, or the inbox row for rows from before payloads
-- had their own table), and whether the id is older than every key kept
-- (its key horizon passed: expired, not unknown).
SELECT i.id IS NOT NULL, i.erased_at IS NOT NULL, coalesce(p.body, i.body),
       $1 < coalesce((SELECT min(id) FROM inbox), 0)
FROM (SELECT 1) AS one
LEFT JOIN inbox i ON i.id = $1 AND i.tenant_id = $2
LEFT JOIN inbox_payloads p ON p.inbox_id = i.id AND p.received_at = i.received_at
