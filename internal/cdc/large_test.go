package cdc

import (
	"context"
	"testing"
	"time"
)

// A transaction of 100,000 outbox rows goes through within the in-flight
// bound, on one replication connection that a 5 s wal_sender_timeout does
// not drop while the relay waits for Kafka mid-transaction.
func TestLargeTransactionWithinMemoryBound(t *testing.T) {
	t.Parallel()
	b := setup(t, "large")
	c := b.collect()
	ctx := context.Background()
	const rows, maxInFlight = 100_000, 5000
	dbURL := b.urlWith(map[string]string{"options": "-c wal_sender_timeout=5s"})
	r := b.startRelay(Config{MaxInFlight: maxInFlight}, dbURL)
	pid := b.waitForSlot("the relay to open its slot")

	start := time.Now()
	_, err := b.pool.Exec(ctx, `INSERT INTO outbox (topic, key, headers, payload)
		SELECT $1, convert_to('tenant/thing/k' || (g % 16), 'UTF8'),
		       jsonb_build_object('ce_specversion', '1.0', 'ce_id', 'evt_' || g, 'ce_type', 'test.row', 'ce_tenantid', 'tenant'),
		       convert_to(repeat('x', 200), 'UTF8')
		FROM generate_series(1, $2::int) g`, b.topic, rows)
	if err != nil {
		t.Fatal(err)
	}
	committed := time.Since(start)

	peak := 0
	done := make(chan struct{})
	go func() {
		defer close(done)
		for c.seen() < rows {
			if wm := r.current.Load(); wm != nil {
				peak = max(peak, wm.progress().inflight)
			}
			time.Sleep(20 * time.Millisecond) // sampling
		}
	}()
	dups := c.waitForAll(t, b.outbox(time.Time{}), 3*time.Minute)
	<-done
	t.Logf("100k rows in one commit (%s to commit): in Kafka %s after the commit, peak in flight %d (bound %d), %d duplicates",
		committed.Round(time.Millisecond), (time.Since(start) - committed).Round(time.Millisecond), peak, maxInFlight, dups)
	if peak > maxInFlight+1 {
		t.Errorf("%d records in flight, bound %d", peak, maxInFlight)
	}
	if _, now := b.slotHolder(ctx); now != pid {
		t.Errorf("the replication connection changed (pid %d -> %d)", pid, now)
	}
}
