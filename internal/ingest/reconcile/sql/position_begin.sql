-- An automatic window begins: saved before any remote call, so a run that
-- stops anywhere in it leaves the window for the next to resume.
INSERT INTO reconcile_positions AS p (source_id, since, until, phase, cursor, reached, updated_at)
VALUES ($1, $2, $3, $4, '', NULL, now())
ON CONFLICT (source_id) DO UPDATE
    SET since = $2, until = $3, phase = $4, cursor = '', reached = NULL, updated_at = now()
