-- A run that could not begin (no credentials, no API, a window that cannot
-- be) is a row too, so status shows it; a source that does not exist has
-- none.
INSERT INTO reconcile_runs (source_id, since, until, dry_run, automatic, outcome, error, finished_at)
SELECT s.id, $2, $3, $4, $5, 'refused', $6, now() FROM sources s WHERE s.id = $1::uuid
