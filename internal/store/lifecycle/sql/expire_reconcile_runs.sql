-- One batch of reconciliation runs that ended longer ago than the horizon
-- ($1), with their corrections; a run that never ended (its process died)
-- goes once it began that long ago. Each source's newest good run (ended,
-- without error, not a dry run; the greatest until, then the greatest id)
-- is kept however old: the greatest until of a source's good runs is its
-- watermark as the runs record it (what reconciliation resumed from until
-- reconcile_positions took over, and what 00025 seeded each position
-- from), and aging out never moves it back. A run without a window (since
-- 00025 until may be NULL) is no watermark.
--
-- A run ends after it began, so started_at bounds the scan (the index
-- reconcile_runs_started_at, 00026). The runs of a batch are at most $2;
-- their corrections, all of them.
WITH gone AS (
    DELETE FROM reconcile_runs WHERE id IN (
        SELECT r.id FROM reconcile_runs r
        WHERE r.started_at < $1 AND coalesce(r.finished_at, r.started_at) < $1
          AND NOT (r.finished_at IS NOT NULL AND r.error = '' AND NOT r.dry_run AND r.until IS NOT NULL
                   AND NOT EXISTS (SELECT 1 FROM reconcile_runs n
                                   WHERE n.source_id = r.source_id
                                     AND n.finished_at IS NOT NULL AND n.error = '' AND NOT n.dry_run
                                     AND (n.until, n.id) > (r.until, r.id)))
        LIMIT $2)
    RETURNING id
), corrections AS (
    DELETE FROM reconcile_corrections c USING gone WHERE c.run_id = gone.id
    RETURNING 1
)
SELECT (SELECT count(*) FROM gone), (SELECT count(*) FROM corrections)
