-- What reconciliation runs did about one event (entered it, asked for its
-- redelivery).
SELECT c.run_id, c.event_id, c.outcome, c.at FROM reconcile_corrections c WHERE c.inbox_id = $1 ORDER BY c.at
