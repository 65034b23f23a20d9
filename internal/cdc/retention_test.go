package cdc

import (
	"context"
	"testing"
	"time"
)

// Outbox rows are kept for the retention window after the relay confirmed
// them, then removed; younger rows stay for a resync to find.
func TestRetentionRemovesConfirmedRowsPastTheWindow(t *testing.T) {
	t.Parallel()
	b := setup(t, "retention")
	c := b.collect()
	ctx := context.Background()
	r := b.startRelay(Config{Retention: time.Hour, RetentionInterval: 100 * time.Millisecond, RetentionBatch: 7,
		HeartbeatInterval: 200 * time.Millisecond}, b.db.URL)
	r.waitStreaming(t)
	insertRows(t, b, "young", 20)
	insertRows(t, b, "old", 30)
	// The old rows were written two hours ago as far as retention can tell.
	if _, err := b.pool.Exec(ctx, `UPDATE outbox SET created_at = now() - interval '2 hours' WHERE convert_from(key, 'UTF8') LIKE 'tenant/thing/old%'`); err != nil {
		t.Fatal(err)
	}
	c.waitForAll(t, b.outbox(time.Time{}), time.Minute)
	// Each pass removes what its confirmed time allows: the old rows go in
	// the first pass that follows their confirmation.
	deadline := time.Now().Add(30 * time.Second)
	for removed := int64(0); removed < 30; {
		if time.Now().After(deadline) {
			t.Fatalf("%d of the 30 rows past the window removed", removed)
		}
		removed += r.testSignals.retained.WaitOrTimeout(30*time.Second, "a retention pass")
	}
	var old, young int
	if err := b.pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE created_at < now() - interval '1 hour'), count(*) FILTER (WHERE created_at >= now() - interval '1 hour') FROM outbox`).Scan(&old, &young); err != nil {
		t.Fatal(err)
	}
	if old != 0 || young != 20 {
		t.Fatalf("%d rows past the window and %d inside it left, want 0 and 20", old, young)
	}
}

// KeepOutbox keeps every row: no retention pass runs.
func TestKeepOutboxRunsNoRetention(t *testing.T) {
	t.Parallel()
	b := setup(t, "keepoutbox")
	c := b.collect()
	ctx := context.Background()
	r := b.startRelay(Config{KeepOutbox: true, RetentionInterval: 50 * time.Millisecond, HeartbeatInterval: 100 * time.Millisecond}, b.db.URL)
	r.waitStreaming(t)
	insertRows(t, b, "old", 10)
	if _, err := b.pool.Exec(ctx, `UPDATE outbox SET created_at = now() - interval '1000 hours'`); err != nil {
		t.Fatal(err)
	}
	c.waitForAll(t, b.outbox(time.Time{}), time.Minute)
	r.testSignals.retained.RequireNone(500*time.Millisecond, "a retention pass with KeepOutbox (ten retention intervals)")
	if n := b.outbox(time.Time{}); len(n) != 10 {
		t.Fatalf("%d rows left, want 10", len(n))
	}
}

// The zero value means the default everywhere: a Config with no retention
// keeps rows 24 hours, never forever; only KeepOutbox keeps them.
func TestRetentionZeroValueIsTheDefault(t *testing.T) {
	t.Parallel()
	for name, cfg := range map[string]Config{"zero": {}, "negative": {Retention: -time.Hour}} {
		got := cfg.WithDefaults()
		if got.Retention != 24*time.Hour || got.KeepOutbox {
			t.Errorf("%s: Retention %s KeepOutbox %v, want 24h and false", name, got.Retention, got.KeepOutbox)
		}
	}
	if got := (Config{Retention: time.Hour, KeepOutbox: true}).WithDefaults(); got.Retention != time.Hour || !got.KeepOutbox {
		t.Errorf("explicit values changed: %+v", got)
	}
}
