-- A run begins: its window is recorded before any remote call, so a run
-- that dies leaves a row without finished_at. Rows of the source's runs
-- that never finished are of processes that died: this run holds the
-- source's lock, so none of them is running.
WITH abandoned AS (
    UPDATE reconcile_runs SET outcome = 'abandoned' WHERE source_id = $1 AND finished_at IS NULL AND outcome = 'running'
)
INSERT INTO reconcile_runs (source_id, since, until, dry_run, automatic, phase, note)
VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id
