package cdc

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// SlotStatus is a replication slot as operators see it.
type SlotStatus struct {
	Slot   string `json:"slot"`
	Exists bool   `json:"exists"`
	// Active: a relay is streaming from the slot now.
	Active       bool   `json:"active"`
	ConfirmedLSN string `json:"confirmed_lsn,omitempty"`
	// LagBytes is the WAL the slot retains: current WAL LSN minus its
	// confirmed_flush_lsn.
	LagBytes int64 `json:"lag_bytes"`
	// WALStatus is Postgres's: reserved, extended, unreserved or lost
	// (invalidated; `sluice cdc resync` rebuilds it).
	WALStatus string `json:"wal_status,omitempty"`
	// ConfirmedTime is the commit time as of which every outbox row is in
	// Kafka, as the relay last recorded it; nil before its first confirm.
	ConfirmedTime *time.Time `json:"confirmed_time,omitempty"`
}

// ReadSlotStatus reads slot's status; a slot Postgres does not have is
// Exists false, not an error.
func ReadSlotStatus(ctx context.Context, pool *pgxpool.Pool, slot string) (SlotStatus, error) {
	s := SlotStatus{Slot: slot}
	err := pool.QueryRow(ctx, slotStatusSQL, slot).Scan(&s.Exists, &s.Active, &s.ConfirmedLSN, &s.LagBytes, &s.WALStatus, &s.ConfirmedTime)
	if err != nil {
		return s, fmt.Errorf("slot %s status: %w", slot, err)
	}
	return s, nil
}
