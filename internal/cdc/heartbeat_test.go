package cdc

import (
	"context"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/testenv"
)

// Invariant 11: an idle outbox beside a busy table does not pin WAL. The
// slot's confirmed position follows the server's WAL, and heartbeats keep the
// confirmed commit time (the clock of retention and of a resync's --since)
// moving too.
func TestIdleOutboxBusyDatabaseSlotAdvances(t *testing.T) {
	t.Parallel()
	b := setup(t, "idle")
	ctx := context.Background()
	r := b.startRelay(Config{HeartbeatInterval: 200 * time.Millisecond}, b.db.URL)
	r.waitStreaming(t)
	if _, err := b.pool.Exec(ctx, `CREATE TABLE busy (id bigserial PRIMARY KEY, v text)`); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	churned := make(chan error, 1)
	go func() {
		for {
			select {
			case <-stop:
				churned <- nil
				return
			default:
			}
			if _, err := b.pool.Exec(ctx, `INSERT INTO busy (v) SELECT repeat('x', 200) FROM generate_series(1, 200)`); err != nil {
				churned <- err
				return
			}
		}
	}()
	defer func() {
		close(stop)
		if err := <-churned; err != nil {
			t.Error(err)
		}
	}()

	var start time.Time
	if err := b.pool.QueryRow(ctx, `SELECT now()`).Scan(&start); err != nil {
		t.Fatal(err)
	}
	for round := range 3 {
		var target string
		if err := b.pool.QueryRow(ctx, `SELECT pg_current_wal_lsn()::text`).Scan(&target); err != nil {
			t.Fatal(err)
		}
		testenv.Eventually(t, 30*time.Second, "the slot's confirmed LSN to pass "+target, func() (bool, error) {
			var passed bool
			err := b.pool.QueryRow(ctx, `SELECT confirmed_flush_lsn >= $2::pg_lsn FROM pg_replication_slots WHERE slot_name = $1`,
				b.slot, target).Scan(&passed)
			return passed, err
		})
		t.Logf("round %d: confirmed_flush_lsn passed %s with no outbox row written", round+1, target)
	}
	testenv.Eventually(t, 30*time.Second, "heartbeats to record a confirmed time in cdc_slots", func() (bool, error) {
		var at *time.Time
		err := b.pool.QueryRow(ctx, `SELECT confirmed_time FROM cdc_slots WHERE slot = $1`, b.slot).Scan(&at)
		return at != nil && at.After(start), err
	})
	testenv.Eventually(t, 30*time.Second, "the lag gauges", func() (bool, error) {
		_, hasLag := r.gauge(t, "sluice_cdc_slot_lag_bytes")
		age, hasAge := r.gauge(t, "sluice_cdc_oldest_unconfirmed_seconds")
		return hasLag && hasAge && age == 0, nil
	})
}
