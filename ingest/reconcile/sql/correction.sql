INSERT INTO reconcile_corrections (run_id, source_id, event_id, outcome, inbox_id) VALUES ($1, $2, $3, $4, $5)
