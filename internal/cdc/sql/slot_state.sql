-- The slot as Postgres knows it, and whether the relay has known it before.
-- wal_status 'lost' means max_slot_wal_keep_size invalidated it.
SELECT s.confirmed_flush_lsn::text, s.wal_status, k.slot IS NOT NULL AS known, k.confirmed_time
FROM (SELECT $1::text AS name) n
LEFT JOIN pg_replication_slots s ON s.slot_name = n.name
LEFT JOIN cdc_slots k ON k.slot = n.name
