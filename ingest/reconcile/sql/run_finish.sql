UPDATE reconcile_runs SET finished_at = now(), found = $2, corrected = $3, error = $4 WHERE id = $1
