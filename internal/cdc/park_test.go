package cdc

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/testenv"
)

// A record Kafka refuses for good (here: larger than any batch may be) is
// parked with its reason and counted; the rows after it flow on.
func TestRecordKafkaRefusesIsParkedAndTheStreamMovesOn(t *testing.T) {
	t.Parallel()
	b := setup(t, "park")
	c := b.collect()
	ctx := context.Background()
	r := b.startRelay(Config{}, b.db.URL)
	r.waitStreaming(t)
	if n := b.slotGauge(t, "sluice_cdc_parked_records"); n != 0 {
		t.Fatalf("parked records before any: %v, want a series at 0", n)
	}
	insertRows(t, b, "before", 10)
	var tooLarge string
	err := b.pool.QueryRow(ctx, `INSERT INTO outbox (topic, key, headers, payload) VALUES ($1, 'tenant/thing/huge', '{}', $2) RETURNING id::text`,
		b.topic, bytes.Repeat([]byte("x"), 2<<20)).Scan(&tooLarge)
	if err != nil {
		t.Fatal(err)
	}
	insertRows(t, b, "after", 10)

	var rows []tableRow
	for _, row := range b.outbox(time.Time{}) {
		if row.id != tooLarge {
			rows = append(rows, row)
		}
	}
	c.waitForAll(t, rows, time.Minute)
	testenv.Eventually(t, 30*time.Second, "the refused record parked", func() (bool, error) {
		var reason string
		err := b.pool.QueryRow(ctx, `SELECT reason FROM cdc_parked WHERE slot = $1 AND topic = $2 AND length(payload) = $3`,
			b.slot, b.topic, 2<<20).Scan(&reason)
		return err == nil && reason != "", nil
	})
	// The row commits before the counter moves: wait for both.
	testenv.Eventually(t, 30*time.Second, "the parked record counted", func() (bool, error) {
		return r.parkedBy(t, ReasonRefused) == 1, nil
	})
	if n := b.slotGauge(t, "sluice_cdc_parked_records"); n != 1 {
		t.Errorf("parked records %v, want 1", n)
	}
	if wal := b.slotGauge(t, "sluice_cdc_slot_retained_wal_bytes"); wal <= 0 {
		t.Errorf("WAL retained by a streaming slot %v, want above 0", wal)
	}
	testenv.Eventually(t, 30*time.Second, "the slot confirmed past the parked record", func() (bool, error) {
		wm := r.current.Load()
		return wm != nil && wm.progress().idle, nil
	})
}
