-- An automatic window was read to its end: everything before its until is
-- covered, and the next window begins there (less the overlap).
UPDATE reconcile_positions
SET covered_until = greatest(coalesce(covered_until, until), until), since = NULL, until = NULL, phase = '', cursor = '',
    reached = NULL, updated_at = now()
WHERE source_id = $1
