-- A source's automatic position (no row before its first automatic run).
SELECT covered_until, since, until, phase, cursor, reached FROM reconcile_positions WHERE source_id = $1
