-- A run begins: its window is recorded before any remote call, so a run
-- that dies leaves a row without finished_at.
INSERT INTO reconcile_runs (source_id, since, until, dry_run) VALUES ($1, $2, $3, $4) RETURNING id
