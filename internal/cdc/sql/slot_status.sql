-- A slot as operators see it: whether Postgres has it and a reader streams
-- from it, what it confirmed, the WAL it retains (current WAL LSN minus
-- confirmed_flush_lsn: what an idle or stalled relay pins), wal_status
-- ('lost': invalidated by max_slot_wal_keep_size), and the commit time as of
-- which the relay knows every outbox row is in Kafka. Always one row.
SELECT s.slot_name IS NOT NULL, coalesce(s.active, false), coalesce(s.confirmed_flush_lsn::text, ''),
       coalesce(pg_wal_lsn_diff(pg_current_wal_lsn(), s.confirmed_flush_lsn), 0)::bigint,
       coalesce(s.wal_status, ''), k.confirmed_time
FROM (SELECT $1::text AS name) n
LEFT JOIN pg_replication_slots s ON s.slot_name = n.name
LEFT JOIN cdc_slots k ON k.slot = n.name
