package cdc

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/testenv"
)

// Two `sluice cdc` processes on one slot: one streams, the other stands by.
// When the leader is killed -9 under load, the standby takes over within
// seconds and nothing is lost.
func TestStandbyTakesOverWhenLeaderIsKilled(t *testing.T) {
	t.Parallel()
	b := setup(t, "failover")
	c := b.collect()
	procs := map[string]*process{"relay-a": b.startProcess("relay-a")}
	b.waitForSlot("relay-a to open the slot")
	procs["relay-b"] = b.startProcess("relay-b")
	load := b.startLoader(8, 100, 2*time.Millisecond)
	testenv.Eventually(t, 30*time.Second, "records flowing", func() (bool, error) { return c.seen() > 500, nil })

	ctx := context.Background()
	leader, _ := b.slotHolder(ctx)
	standby := map[string]string{"relay-a": "relay-b", "relay-b": "relay-a"}[leader]
	if standby == "" {
		t.Fatalf("the slot is held by %q, not by one of the relays", leader)
	}
	procs[leader].kill(syscall.SIGKILL)
	killedAt := time.Now()
	testenv.Eventually(t, 30*time.Second, standby+" to take the slot over", func() (bool, error) {
		holder, _ := b.slotHolder(ctx)
		return holder == standby, nil
	})
	takeover := time.Since(killedAt)
	if takeover > 15*time.Second {
		t.Errorf("the standby took %s to take over", takeover)
	}
	before := c.seen()
	testenv.Eventually(t, time.Minute, "records flowing from the new leader", func() (bool, error) { return c.seen() > before+500, nil })

	load.halt()
	dups := c.waitForAll(t, b.outbox(time.Time{}), 2*time.Minute)
	t.Logf("%s killed -9: %s took the slot over in %s; %d rows in Kafka in per-key order, %d duplicates",
		leader, standby, takeover.Round(time.Millisecond), load.rows.Load(), dups)
	procs[standby].kill(syscall.SIGTERM)
}
