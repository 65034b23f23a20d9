package cdc

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sluicehq/sluice/internal/pg"
)

// ErrSlotLost means the relay's slot existed once and is gone or was
// invalidated: rows committed meanwhile are not in the stream, so the relay
// will not start until `sluice cdc resync --since T` rebuilt it.
var ErrSlotLost = errors.New("replication slot lost")

// ensurePublication checks that the outbox publication is there and
// covers the outbox. Migration 00035 makes the default one as the schema's
// owner; one of another name (Config.Publication) is made here when the
// relay's role may (it owns outbox), and otherwise refused in words: the
// relay's own role needs no ownership. Only inserts are published: rows
// are removed by retention, and those deletes must not become records.
func ensurePublication(ctx context.Context, pool *pgxpool.Pool, name string) error {
	err := CheckPublication(ctx, pool, name)
	if !errors.As(err, new(noPublication)) {
		return err
	}
	_, err = pool.Exec(ctx, fmt.Sprintf(`CREATE PUBLICATION %s FOR TABLE outbox WITH (publish = 'insert')`, pgx.Identifier{name}.Sanitize()))
	var pgErr *pgconn.PgError
	switch {
	case errors.As(err, &pgErr) && pgErr.Code == "42710": // created meanwhile by another instance
		return nil
	case pg.IsInsufficientPrivilege(err):
		return fmt.Errorf("publication %s does not exist and role %s may not create it (stage relay; it needs ownership of outbox): run `sluice migrate` as the schema's owner, which creates sluice_outbox, or as the owner CREATE PUBLICATION %s FOR TABLE outbox WITH (publish = 'insert')",
			name, currentUser(ctx, pool), pgx.Identifier{name}.Sanitize())
	case err != nil:
		return fmt.Errorf("create publication %s: %w", name, err)
	}
	return nil
}

// noPublication: CheckPublication found no publication of that name.
type noPublication struct{ name string }

func (e noPublication) Error() string {
	return fmt.Sprintf("publication %s does not exist (stage relay): run `sluice migrate` as the schema's owner, which creates sluice_outbox", e.name)
}

// CheckPublication says whether publication name exists and publishes
// the outbox's inserts, as the relay needs; its error is the line to act
// on.
func CheckPublication(ctx context.Context, q pg.Querier, name string) error {
	var exists, covers, inserts bool
	if err := q.QueryRow(ctx, publicationSQL, name).Scan(&exists, &covers, &inserts); err != nil {
		return fmt.Errorf("look up publication %s: %w", name, err)
	}
	switch {
	case !exists:
		return noPublication{name}
	case !covers || !inserts:
		return fmt.Errorf("publication %s does not publish the outbox's inserts (stage relay): as the schema's owner ALTER PUBLICATION %s ADD TABLE outbox and SET (publish = 'insert')",
			name, pgx.Identifier{name}.Sanitize())
	}
	return nil
}

const publicationSQL = `
SELECT EXISTS (SELECT 1 FROM pg_publication WHERE pubname = $1),
       EXISTS (SELECT 1 FROM pg_publication_tables WHERE pubname = $1 AND schemaname = current_schema() AND tablename = 'outbox'),
       coalesce((SELECT pubinsert FROM pg_publication WHERE pubname = $1), false)`

func currentUser(ctx context.Context, pool *pgxpool.Pool) string {
	var u string
	_ = pool.QueryRow(ctx, `SELECT current_user`).Scan(&u)
	return u
}

// slotPosition returns the slot's confirmed position, creating the slot when
// the relay never had one (a new deployment). A slot the relay had before and
// that is now missing or invalidated is ErrSlotLost, never recreated here.
func slotPosition(ctx context.Context, pool *pgxpool.Pool, repl *pgconn.PgConn, slot string) (pglogrepl.LSN, bool, error) {
	var (
		lsn, walStatus *string
		known          bool
		confirmedTime  *time.Time
	)
	if err := pool.QueryRow(ctx, slotStateSQL, slot).Scan(&lsn, &walStatus, &known, &confirmedTime); err != nil {
		return 0, false, fmt.Errorf("look up slot %s: %w", slot, err)
	}
	since := "the last time you know every outbox row was in Kafka"
	if confirmedTime != nil {
		since = confirmedTime.UTC().Format(time.RFC3339) + " (its last recorded confirmation)"
	}
	switch {
	case walStatus != nil && *walStatus == "lost":
		return 0, false, fmt.Errorf("slot %s was invalidated (wal_status lost); run `sluice cdc resync --since T` with T = %s: %w", slot, since, ErrSlotLost)
	case lsn != nil:
		pos, err := pglogrepl.ParseLSN(*lsn)
		return pos, false, err
	case known:
		return 0, false, fmt.Errorf("slot %s is gone; run `sluice cdc resync --since T` with T = %s: %w", slot, since, ErrSlotLost)
	}
	pos, err := createSlot(ctx, pool, repl, slot, "NOEXPORT_SNAPSHOT", nil, 0)
	return pos, err == nil, err
}

// createSlot creates the slot and records it in cdc_slots. With snapshot
// "EXPORT_SNAPSHOT" the replication connection holds a snapshot of exactly
// what the slot will not stream, until its next command.
func createSlot(ctx context.Context, pool *pgxpool.Pool, repl *pgconn.PgConn, slot, snapshot string, since *time.Time, rows int64) (pglogrepl.LSN, error) {
	pos, _, err := createSlotSnapshot(ctx, repl, slot, snapshot)
	if err != nil {
		return 0, err
	}
	if err := recordSlot(ctx, pool, slot, pos, since, rows); err != nil {
		return 0, err
	}
	return pos, nil
}

func createSlotSnapshot(ctx context.Context, repl *pgconn.PgConn, slot, snapshot string) (pglogrepl.LSN, string, error) {
	res, err := pglogrepl.CreateReplicationSlot(ctx, repl, slot, "pgoutput",
		pglogrepl.CreateReplicationSlotOptions{Mode: pglogrepl.LogicalReplication, SnapshotAction: snapshot})
	if err != nil {
		return 0, "", fmt.Errorf("create slot %s: %w", slot, err)
	}
	pos, err := pglogrepl.ParseLSN(res.ConsistentPoint)
	if err != nil {
		return 0, "", fmt.Errorf("slot %s consistent point: %w", slot, err)
	}
	return pos, res.SnapshotName, nil
}

func recordSlot(ctx context.Context, pool *pgxpool.Pool, slot string, pos pglogrepl.LSN, since *time.Time, rows int64) error {
	var rowsArg *int64
	if since != nil {
		rowsArg = &rows
	}
	if _, err := pool.Exec(ctx, slotCreatedSQL, slot, pos.String(), since, rowsArg); err != nil {
		return fmt.Errorf("record slot %s: %w", slot, err)
	}
	return nil
}

// replicationConn opens a connection in replication mode.
func replicationConn(ctx context.Context, dsn string) (*pgconn.PgConn, error) {
	cfg, err := pgconn.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("parse database url: %w", err)
	}
	cfg.RuntimeParams["replication"] = "database"
	conn, err := pgconn.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("replication connection: %w", err)
	}
	return conn, nil
}
