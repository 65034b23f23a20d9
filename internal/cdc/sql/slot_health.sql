-- The relay's slot ($1) as Postgres holds it, read at scrape time so that
-- it tells the truth with no relay running: whether a walsender streams
-- from it, whether it is lost (gone, or invalidated by
-- max_slot_wal_keep_size, after the relay had known it: rows committed
-- meanwhile are not in the stream), and the WAL it keeps from recycling
-- (from restart_lsn, which is what pins WAL on disk).
SELECT n.slot,
       coalesce(s.active, false)::int::float8,
       (k.slot IS NOT NULL AND (s.slot_name IS NULL OR s.wal_status = 'lost'))::int::float8,
       coalesce(pg_wal_lsn_diff(pg_current_wal_lsn(), s.restart_lsn), 0)::float8
FROM (SELECT $1::text AS slot) n
LEFT JOIN pg_replication_slots s ON s.slot_name = n.slot
LEFT JOIN cdc_slots k ON k.slot = n.slot
