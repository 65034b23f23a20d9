package cdc

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/testenv"
)

// A slot dropped on purpose: the relay refuses to recreate it silently (rows
// committed meanwhile would be skipped); `sluice cdc resync --since T`
// recreates it and re-publishes from the table, and the stream goes on.
func TestResyncRestoresTheStreamAfterTheSlotWasDropped(t *testing.T) {
	t.Parallel()
	b := setup(t, "resync")
	c := b.collect()
	ctx := context.Background()
	cfg := Config{RetryBackoff: 200 * time.Millisecond, LeaderPoll: 200 * time.Millisecond}
	r := b.startRelay(cfg, b.db.URL)
	r.waitStreaming(t)
	insertRows(t, b, "a", 50)
	c.waitForAll(t, b.outbox(time.Time{}), time.Minute)
	if active, lost := b.slotGauge(t, "sluice_cdc_slot_active"), b.slotGauge(t, "sluice_cdc_slot_lost"); active != 1 || lost != 0 {
		t.Fatalf("streaming: slot active %v, lost %v; want 1 and 0", active, lost)
	}

	var since time.Time
	if err := b.pool.QueryRow(ctx, `SELECT now()`).Scan(&since); err != nil {
		t.Fatal(err)
	}
	r.stop()
	testenv.Eventually(t, 30*time.Second, "the slot dropped", func() (bool, error) {
		_, err := b.pool.Exec(ctx, `SELECT pg_drop_replication_slot($1)`, b.slot)
		return err == nil, err
	})
	insertRows(t, b, "b", 100) // committed while no slot exists
	// The on-call's alert reads this, with no relay streaming.
	if active, lost := b.slotGauge(t, "sluice_cdc_slot_active"), b.slotGauge(t, "sluice_cdc_slot_lost"); active != 0 || lost != 1 {
		t.Fatalf("dropped: slot active %v, lost %v; want 0 and 1", active, lost)
	}

	repl, err := replicationConn(ctx, b.db.URL)
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = slotPosition(ctx, b.pool, repl, b.slot)
	repl.Close(ctx)
	if !errors.Is(err, ErrSlotLost) {
		t.Fatalf("a relay asked for its dropped slot got %v, want ErrSlotLost", err)
	}
	b.startRelay(cfg, b.db.URL) // waits, refusing, until the resync

	cmd := exec.Command(sluiceBin(t), "cdc", "resync", "--since", since.Format(time.RFC3339Nano))
	cmd.Env = append(os.Environ(), "SLUICE_DATABASE_URL="+b.db.URL, "SLUICE_KAFKA_BROKERS="+b.brokers[0],
		"SLUICE_SLOT="+b.slot, "SLUICE_LOG_LEVEL=warn")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("sluice cdc resync: %v\n%s", err, out)
	}
	published, err := strconv.Atoi(strings.SplitN(string(out), "\n", 2)[0])
	// The 100 committed while no slot existed, and the 50 before T, within
	// the margin a resync takes before it.
	if err != nil || published != 150 {
		t.Fatalf("resync printed %q, want 150 rows re-published first", out)
	}
	insertRows(t, b, "c", 50) // streamed by the relay from the new slot
	dups := c.waitForAll(t, b.outbox(since), time.Minute)
	if lost := b.slotGauge(t, "sluice_cdc_slot_lost"); lost != 0 {
		t.Errorf("after the resync: slot lost %v, want 0", lost)
	}
	t.Logf("resync re-published %d rows; with the 50 streamed after it, every row since T is in Kafka in per-key order (%d duplicates)", published, dups)
}

func insertRows(t *testing.T, b *bundle, batch string, n int) {
	t.Helper()
	ctx := context.Background()
	tx, err := b.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	for i := range n {
		if err := insertRow(ctx, tx, b.topic, "tenant/thing/"+batch+strconv.Itoa(i%7), i); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
}

// A transaction that began before the relay's last confirmed commit and
// committed after it holds rows created before T (created_at is the
// transaction's start) that no relay confirmed: `sluice cdc resync --since
// T` re-publishes them too (ResyncMargin), not only the rows created since.
func TestResyncPublishesRowsCreatedBeforeTAndCommittedAfter(t *testing.T) {
	t.Parallel()
	b := setup(t, "resynclate")
	c := b.collect()
	ctx := context.Background()
	late, err := b.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = late.Rollback(ctx) }()
	if err := insertRow(ctx, late, b.topic, "tenant/thing/late", 0); err != nil {
		t.Fatal(err)
	}
	insertRows(t, b, "early", 10)
	var since time.Time
	if err := b.pool.QueryRow(ctx, `SELECT now()`).Scan(&since); err != nil {
		t.Fatal(err)
	}
	if err := late.Commit(ctx); err != nil { // after T, created before it
		t.Fatal(err)
	}
	cmd := exec.Command(sluiceBin(t), "cdc", "resync", "--since", since.Format(time.RFC3339Nano))
	cmd.Env = append(os.Environ(), "SLUICE_DATABASE_URL="+b.db.URL, "SLUICE_KAFKA_BROKERS="+b.brokers[0],
		"SLUICE_SLOT="+b.slot, "SLUICE_LOG_LEVEL=warn")
	if out, err := cmd.Output(); err != nil {
		t.Fatalf("sluice cdc resync: %v\n%s", err, out)
	}
	c.waitForAll(t, b.outbox(time.Time{}), 30*time.Second)
}
