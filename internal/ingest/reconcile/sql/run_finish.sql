UPDATE reconcile_runs
SET finished_at = now(), found = $2, corrected = $3, error = $4, outcome = $5, missing = $6, pages = $7, requests = $8,
    phase = $9, reached = $10
WHERE id = $1
