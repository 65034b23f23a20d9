-- One page handled: its corrections, the run's counts and where it stands,
-- and (for an automatic run, $13) the source's position, in one statement,
-- after the page's events committed.
WITH corrections AS (
    INSERT INTO reconcile_corrections (run_id, source_id, event_id, outcome, inbox_id)
    SELECT $1, $2, e, o, nullif(i, 0) FROM unnest($3::text[], $4::text[], $5::bigint[]) AS c(e, o, i)
), run AS (
    UPDATE reconcile_runs SET found = $6, corrected = $7, pages = $8, requests = $9, phase = $10, reached = $12 WHERE id = $1
)
UPDATE reconcile_positions SET phase = $10, cursor = $11, reached = $12, updated_at = now()
WHERE source_id = $2 AND $13::boolean
