package cdc

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sluicehq/sluice/internal/listen"
)

// Checks are what the relay needs of Postgres's configuration before it can
// stream: logical WAL, a replication slot it may create, a WAL sender it
// may use. Each error says which setting to change.
func Checks(pool *pgxpool.Pool, cfg Config) []listen.Check {
	cfg = cfg.WithDefaults()
	return []listen.Check{
		{Name: "wal_level", Stage: "relay", Refuse: true, Fn: func(ctx context.Context) error { return checkWALLevel(ctx, pool) }},
		{Name: "replication_slots", Stage: "relay", Refuse: true, Fn: func(ctx context.Context) error { return checkSlots(ctx, pool, cfg.Slot) }},
		{Name: "wal_senders", Stage: "relay", Fn: func(ctx context.Context) error { return checkSenders(ctx, pool, cfg.Slot) }},
	}
}

func checkWALLevel(ctx context.Context, pool *pgxpool.Pool) error {
	var level string
	if err := pool.QueryRow(ctx, `SELECT current_setting('wal_level')`).Scan(&level); err != nil {
		return fmt.Errorf("read wal_level: %w", err)
	}
	if level != "logical" {
		return fmt.Errorf("postgres has wal_level = %s; the relay needs logical: set wal_level = logical (RDS and Aurora: rds.logical_replication = 1 in the parameter group; Cloud SQL: the flag cloudsql.logical_decoding = on) and restart postgres", level)
	}
	return nil
}

// checkSlots passes when the relay's slot exists, or when a slot is free
// for it to create.
func checkSlots(ctx context.Context, pool *pgxpool.Pool, slot string) error {
	var (
		exists bool
		used   []string
		most   int
	)
	err := pool.QueryRow(ctx, `SELECT
		EXISTS (SELECT 1 FROM pg_replication_slots WHERE slot_name = $1),
		COALESCE((SELECT array_agg(slot_name::text ORDER BY slot_name) FROM pg_replication_slots), '{}'),
		current_setting('max_replication_slots')::int`, slot).Scan(&exists, &used, &most)
	if err != nil {
		return fmt.Errorf("read replication slots: %w", err)
	}
	if exists || len(used) < most {
		return nil
	}
	return fmt.Errorf("no replication slot free for the relay's slot %q: max_replication_slots = %d and all are taken (%s); drop one that is no longer read (SELECT pg_drop_replication_slot('name')) or raise max_replication_slots and restart postgres",
		slot, most, strings.Join(used, ", "))
}

// checkSenders passes while a WAL sender is free for the relay's
// replication connection, or the relay already holds one. Not a refusal: a
// sender frees itself when an old connection ends.
func checkSenders(ctx context.Context, pool *pgxpool.Pool, slot string) error {
	var busy, most int
	var ours bool
	err := pool.QueryRow(ctx, `SELECT
		(SELECT count(*) FROM pg_stat_replication)::int,
		current_setting('max_wal_senders')::int,
		EXISTS (SELECT 1 FROM pg_replication_slots WHERE slot_name = $1 AND active)`, slot).Scan(&busy, &most, &ours)
	if err != nil {
		return fmt.Errorf("read wal senders: %w", err)
	}
	if ours || busy < most {
		return nil
	}
	return fmt.Errorf("no WAL sender free for the relay: max_wal_senders = %d and %d are in use (pg_stat_replication lists them); raise max_wal_senders and restart postgres, or end a replication connection no longer needed", most, busy)
}
