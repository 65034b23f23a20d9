package cdc

import (
	"context"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/testenv"
)

// The linger batches transactions that commit close together; a transaction
// after a quiet moment is not held for it. With a linger of several seconds,
// a lone row reaches Kafka within a fraction of it, and a row committed
// right behind it waits: the producer lingers to batch it.
func TestLoneTransactionIsNotHeldForTheLinger(t *testing.T) {
	t.Parallel()
	b := setup(t, "linger")
	c := b.collect()
	ctx := context.Background()
	const linger = 4 * time.Second
	r := b.startRelay(Config{Linger: linger}, b.db.URL)
	r.waitStreaming(t)

	// The producer learns a topic's partitions with its first record, which
	// then lingers once whatever the relay asks: learn it first.
	if err := insertRow(ctx, b.pool, b.topic, "first", 1); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 3*linger, "the first row in Kafka", func() (bool, error) { return c.seen() == 1, nil })
	// The condition under test is a quiet moment longer than the linger.
	time.Sleep(linger + 100*time.Millisecond)

	if err := insertRow(ctx, b.pool, b.topic, "lone", 2); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, linger/2, "the lone row in Kafka, well inside the linger", func() (bool, error) {
		return c.seen() == 2, nil
	})

	if err := insertRow(ctx, b.pool, b.topic, "right-behind", 3); err != nil {
		t.Fatal(err)
	}
	// Held, not lost: the linger or the relay's drain at the end sends it.
	for deadline := time.Now().Add(linger / 3); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if n := c.seen(); n != 2 {
			t.Fatalf("%d rows in Kafka: the row committed right behind the lone one was not held for the linger", n)
		}
	}
	if got := r.counter(t, "sluice_cdc_records_produced_total"); got != 3 {
		t.Fatalf("the relay produced %v records, want 3", got)
	}
}
