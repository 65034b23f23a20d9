-- +goose Up
-- The relay's memory of its replication slots. A slot that existed and is
-- gone (dropped, or invalidated by max_slot_wal_keep_size) must never be
-- recreated silently at the end of WAL: every row committed in between would
-- be skipped. The relay refuses and says so; `sluice cdc resync --since T`
-- recreates the slot and re-publishes the outbox from the table.
CREATE TABLE cdc_slots (
    slot           text PRIMARY KEY,
    created_at     timestamptz NOT NULL DEFAULT now(),
    created_lsn    pg_lsn NOT NULL,
    -- What the relay last confirmed, and the commit time as of which every
    -- outbox row is in Kafka: a safe --since for a resync, and the clock of
    -- outbox retention.
    confirmed_lsn  pg_lsn,
    confirmed_time timestamptz,
    updated_at     timestamptz NOT NULL DEFAULT now(),
    resynced_at    timestamptz,
    resynced_since timestamptz,
    resynced_rows  bigint
);

-- +goose Down
DROP TABLE cdc_slots;
