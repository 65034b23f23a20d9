package cdc

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

var (
	//go:embed sql/parked_list.sql
	parkedListSQL string
	//go:embed sql/parked_release.sql
	parkedReleaseSQL string
	//go:embed sql/parked_issued.sql
	parkedIssuedSQL string
)

// Parked is a cdc_parked row, without its payload.
type Parked struct {
	ID         int64      `json:"id"`
	ParkedAt   time.Time  `json:"parked_at"`
	Slot       string     `json:"slot"`
	LSN        string     `json:"lsn"`
	Topic      string     `json:"topic"`
	EventID    string     `json:"event_id"`
	OutboxID   string     `json:"outbox_id"`
	Reason     string     `json:"reason"`
	ReleasedAt *time.Time `json:"released_at,omitempty"`
}

// ListParked returns up to limit parked records, newest first; released
// ones only when withReleased.
func ListParked(ctx context.Context, pool *pgxpool.Pool, withReleased bool, limit int) ([]Parked, error) {
	rows, err := pool.Query(ctx, parkedListSQL, withReleased, limit)
	if err != nil {
		return nil, fmt.Errorf("list parked records: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Parked, error) {
		var p Parked
		err := r.Scan(&p.ID, &p.ParkedAt, &p.Slot, &p.LSN, &p.Topic, &p.EventID, &p.OutboxID, &p.Reason, &p.ReleasedAt)
		return p, err
	})
	if err != nil {
		return nil, fmt.Errorf("list parked records: %w", err)
	}
	return out, nil
}

// ErrAlreadyReleased: the parked record was released before.
var ErrAlreadyReleased = errors.New("cdc: parked record already released")

// ErrParkedExpired: the parked record was released and deleted past the
// payload horizon (internal/store/lifecycle); its id was issued, it is not
// kept.
var ErrParkedExpired = errors.New("cdc: parked record expired")

// ReleaseParked marks parked record id handled (re-published by a resync,
// or judged not needed), so the lifecycle manager may delete it once the
// payload horizon has passed; until then it stays listed with --released.
func ReleaseParked(ctx context.Context, pool *pgxpool.Pool, id int64) error {
	var got int64
	err := pool.QueryRow(ctx, parkedReleaseSQL, id).Scan(&got)
	if err == nil {
		return nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("release parked record %d: %w", id, err)
	}
	var exists, issued bool
	if err := pool.QueryRow(ctx, parkedIssuedSQL, id).Scan(&exists, &issued); err != nil {
		return fmt.Errorf("release parked record %d: %w", id, err)
	}
	switch {
	case exists:
		return fmt.Errorf("parked record %d: %w", id, ErrAlreadyReleased)
	case issued:
		return fmt.Errorf("parked record %d was released and deleted past the payload horizon: %w", id, ErrParkedExpired)
	default:
		return fmt.Errorf("parked record %d does not exist", id)
	}
}
