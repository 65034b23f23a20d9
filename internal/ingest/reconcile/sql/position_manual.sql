-- A manual window [$2, $3) read to its end moves the automatic position only
-- where it joins it: with no automatic window in progress, it extends a
-- covered_until it starts at or before; a source without a position takes
-- its until when the window reaches back as far as a first automatic run
-- would ($4: the lookback's start). A manual window elsewhere moves nothing,
-- so no event between the two is ever skipped.
INSERT INTO reconcile_positions AS p (source_id, covered_until)
SELECT $1, $3::timestamptz WHERE $2::timestamptz <= $4::timestamptz
ON CONFLICT (source_id) DO UPDATE SET covered_until = $3, updated_at = now()
    WHERE p.since IS NULL AND p.covered_until IS NOT NULL AND p.covered_until >= $2::timestamptz AND p.covered_until < $3::timestamptz
