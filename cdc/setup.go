package cdc

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// ensurePublication creates the outbox publication if it is missing. Only
// inserts are published: rows are removed by retention, and those deletes
// must not become records.
func ensurePublication(ctx context.Context, pool *pgxpool.Pool, name string) error {
	var exists bool
	if err := pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_publication WHERE pubname = $1)`, name).Scan(&exists); err != nil {
		return fmt.Errorf("look up publication: %w", err)
	}
	if exists {
		return nil
	}
	_, err := pool.Exec(ctx, fmt.Sprintf(`CREATE PUBLICATION %s FOR TABLE outbox WITH (publish = 'insert')`, pgx.Identifier{name}.Sanitize()))
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "42710" { // created meanwhile by another instance
		return nil
	}
	if err != nil {
		return fmt.Errorf("create publication %s: %w", name, err)
	}
	return nil
}

// slotPosition returns the slot's confirmed position, creating the slot when
// it does not exist. A new slot starts at the current end of WAL: rows
// committed before it are published with `sluice cdc resync`.
func slotPosition(ctx context.Context, pool *pgxpool.Pool, repl *pgconn.PgConn, slot string) (pglogrepl.LSN, bool, error) {
	var lsn *string
	err := pool.QueryRow(ctx, `SELECT confirmed_flush_lsn::text FROM pg_replication_slots WHERE slot_name = $1`, slot).Scan(&lsn)
	if err == nil && lsn != nil {
		pos, err := pglogrepl.ParseLSN(*lsn)
		return pos, false, err
	}
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return 0, false, fmt.Errorf("look up slot %s: %w", slot, err)
	}
	res, err := pglogrepl.CreateReplicationSlot(ctx, repl, slot, "pgoutput", pglogrepl.CreateReplicationSlotOptions{Mode: pglogrepl.LogicalReplication})
	if err != nil {
		return 0, false, fmt.Errorf("create slot %s: %w", slot, err)
	}
	pos, err := pglogrepl.ParseLSN(res.ConsistentPoint)
	if err != nil {
		return 0, false, fmt.Errorf("slot %s consistent point: %w", slot, err)
	}
	return pos, true, nil
}
