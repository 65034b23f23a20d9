package cdc

import (
	"math/rand/v2"
	"syscall"
	"testing"
	"time"
)

// Invariant 5: kill -9 of the relay at random points under a steady load,
// ten times in a row, loses nothing and keeps per-key commit order.
func TestRelayKilledTenTimesUnderLoadLosesNothing(t *testing.T) {
	t.Parallel()
	b := setup(t, "kill")
	c := b.collect()
	p := b.startProcess("relay")
	b.waitForSlot("the first relay to open its slot")
	load := b.startLoader(16, 300, 2*time.Millisecond)

	for i := range 10 {
		// A random moment: inside a transaction's output, between two, or
		// while a large one is in flight.
		time.Sleep(time.Duration(300+rand.IntN(1200)) * time.Millisecond)
		p.kill(syscall.SIGKILL)
		t.Logf("kill %d: %d rows committed so far, %d records in Kafka", i+1, load.rows.Load(), c.seen())
		p = b.startProcess("relay")
	}
	committed := load.halt()
	rows := b.outbox(time.Time{})
	if len(rows) != committed {
		t.Fatalf("the loader committed %d rows, the outbox has %d", committed, len(rows))
	}
	dups := c.waitForAll(t, rows, 2*time.Minute)
	t.Logf("%d rows committed across 10 kills: all in Kafka in per-key commit order; %d duplicate records (%.1f%%)",
		len(rows), dups, 100*float64(dups)/float64(len(rows)))
	p.kill(syscall.SIGTERM)
}
