-- The latest runs, newest first, with their source's kind.
SELECT r.id, r.source_id::text, s.kind, r.since, r.until, r.dry_run, r.automatic, r.outcome, r.started_at, r.finished_at,
       r.found, r.corrected, r.pages, r.requests, r.phase, r.reached, r.missing, r.note, r.error
FROM reconcile_runs r JOIN sources s ON s.id = r.source_id
WHERE $1::uuid IS NULL OR r.source_id = $1
ORDER BY r.id DESC LIMIT $2
