-- Where each reconciled source stands: its automatic position and the
-- window in progress, the events still waiting for their object (what a
-- refused lookup leaves), the permission its last finished run missed, and
-- its budget: spent this hour, and so when the next request is allowed.
SELECT c.source_id::text, s.kind, p.covered_until, p.since, p.until, coalesce(p.phase, ''), p.reached,
       (SELECT count(*) FROM inbox_waiting w WHERE w.source_id = c.source_id),
       coalesce((SELECT r.missing FROM reconcile_runs r WHERE r.source_id = c.source_id AND r.finished_at IS NOT NULL
                 AND NOT r.dry_run ORDER BY r.id DESC LIMIT 1), ''),
       coalesce(b.used, 0), b.budget,
       CASE WHEN b.hour = date_trunc('hour', now()) AND b.used >= b.budget THEN b.hour + interval '1 hour' ELSE now() END
FROM source_api_credentials c JOIN sources s ON s.id = c.source_id
LEFT JOIN reconcile_positions p ON p.source_id = c.source_id
LEFT JOIN reconcile_budgets b ON b.source_id = c.source_id AND b.hour = date_trunc('hour', now())
WHERE $1::uuid IS NULL OR c.source_id = $1
ORDER BY c.source_id
