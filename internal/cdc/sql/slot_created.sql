-- A slot was (re)created at $2. Resync details, when given, say what was
-- re-published from the table.
INSERT INTO cdc_slots (slot, created_lsn, resynced_at, resynced_since, resynced_rows)
VALUES ($1, $2::text::pg_lsn, CASE WHEN $3::timestamptz IS NULL THEN NULL ELSE now() END, $3, $4)
ON CONFLICT (slot) DO UPDATE SET
    created_at = now(), created_lsn = excluded.created_lsn, confirmed_lsn = NULL, updated_at = now(),
    resynced_at = excluded.resynced_at, resynced_since = excluded.resynced_since, resynced_rows = excluded.resynced_rows
