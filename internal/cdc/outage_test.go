package cdc

import (
	"context"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/testenv"
)

// Invariants 5 and 11: Kafka cut off for 30 s under load. The relay stops
// reading at its in-flight bound, keeps its replication connection (status
// updates beat a wal_sender_timeout of 5 s), and resumes by itself: no loss.
func TestKafkaOutageBackpressureAndResumeWithoutRestart(t *testing.T) {
	t.Parallel()
	b := setup(t, "outage")
	c := b.collect()
	proxy := testenv.NewProxy(t, b.brokers[0])
	const maxInFlight = 500
	// wal_sender_timeout is per connection since PostgreSQL 12: 5 s proves
	// the status updates, not a generous default, keep the stream alive.
	dbURL := b.urlWith(map[string]string{"options": "-c wal_sender_timeout=5s"})
	r := b.startRelay(Config{MaxInFlight: maxInFlight}, dbURL, kafkaThrough(proxy)...)
	pid := b.waitForSlot("the relay to open its slot")
	load := b.startLoader(8, 0, 2*time.Millisecond)
	testenv.Eventually(t, 30*time.Second, "records in Kafka before the cut", func() (bool, error) {
		return c.seen() > 200, nil
	})

	proxy.Cut()
	cutAt := time.Now()
	peak, oldest := 0, 0.0
	for time.Since(cutAt) < 30*time.Second {
		if age, ok := r.gauge(t, "sluice_cdc_oldest_unconfirmed_seconds"); ok {
			oldest = max(oldest, age)
		}
		if wm := r.current.Load(); wm != nil {
			peak = max(peak, wm.progress().inflight)
		}
		if _, now := b.slotHolder(context.Background()); now != pid {
			t.Fatalf("the replication connection changed during the outage (pid %d -> %d)", pid, now)
		}
		time.Sleep(100 * time.Millisecond) // sampling, not synchronisation
	}
	during := load.rows.Load()
	proxy.Restore()
	t.Logf("Kafka cut for 30 s: %d rows committed meanwhile, peak in flight %d (bound %d), oldest unconfirmed change %.1f s old",
		during, peak, maxInFlight, oldest)
	if oldest < 20 {
		t.Errorf("the oldest unconfirmed change was at most %.1f s old during a 30 s outage", oldest)
	}
	if peak > maxInFlight+1 {
		t.Errorf("%d records in flight, bound %d", peak, maxInFlight)
	}

	testenv.Eventually(t, time.Minute, "the relay to resume after the outage", func() (bool, error) {
		return c.seen() >= int(during), nil
	})
	load.halt()
	dups := c.waitForAll(t, b.outbox(time.Time{}), 2*time.Minute)
	if _, now := b.slotHolder(context.Background()); now != pid {
		t.Errorf("the relay reconnected its stream (pid %d -> %d): it should have resumed without a restart", pid, now)
	}
	t.Logf("after the outage: every row in Kafka in per-key order, %d duplicates", dups)
}
