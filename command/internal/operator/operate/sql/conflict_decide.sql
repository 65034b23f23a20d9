-- An operator's decision on conflict ($1, $2): written, or written over.
INSERT INTO conflict_outcomes (inbox_id, received_at, outcome, note, actor)
VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (inbox_id, received_at) DO UPDATE
SET outcome = excluded.outcome, note = excluded.note, actor = excluded.actor, decided_at = now()
