-- Where the next run of a source begins: the end of its last run that
-- finished without error (NULL before the first).
SELECT max(until) FROM reconcile_runs WHERE source_id = $1 AND finished_at IS NOT NULL AND error = '' AND NOT dry_run
