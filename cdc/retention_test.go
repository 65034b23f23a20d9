package cdc

import (
	"context"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/testenv"
)

// Outbox rows are kept for the retention window after the relay confirmed
// them, then removed; younger rows stay for a resync to find.
func TestRetentionRemovesConfirmedRowsPastTheWindow(t *testing.T) {
	t.Parallel()
	b := setup(t, "retention")
	c := b.collect()
	ctx := context.Background()
	b.startRelay(Config{Retention: time.Hour, RetentionInterval: 100 * time.Millisecond, RetentionBatch: 7,
		HeartbeatInterval: 200 * time.Millisecond}, b.db.URL)
	b.waitForSlot("the relay to open its slot")
	insertRows(t, b, "young", 20)
	insertRows(t, b, "old", 30)
	// The old rows were written two hours ago as far as retention can tell.
	if _, err := b.pool.Exec(ctx, `UPDATE outbox SET created_at = now() - interval '2 hours' WHERE convert_from(key, 'UTF8') LIKE 'tenant/thing/old%'`); err != nil {
		t.Fatal(err)
	}
	c.waitForAll(t, b.outbox(time.Time{}), time.Minute)
	testenv.Eventually(t, 30*time.Second, "rows past the window removed", func() (bool, error) {
		var old, young int
		err := b.pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE created_at < now() - interval '1 hour'), count(*) FILTER (WHERE created_at >= now() - interval '1 hour') FROM outbox`).Scan(&old, &young)
		if young != 20 {
			t.Fatalf("%d rows inside the window left, want 20", young)
		}
		return old == 0, err
	})
}
