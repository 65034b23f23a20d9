package cdc

import (
	"math/rand/v2"
	"net/url"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/pg"
	"github.com/sluicehq/sluice/internal/testenv"
)

// Postgres cut off from the relay (replication stream, leader lock and pool
// all at once) for a while under load: the relay loses its stream and its
// lock, takes them back when Postgres returns, and replays from the slot's
// confirmed position: nothing lost, per-key order kept.
func TestPostgresOutageRelayReconnectsAndLosesNothing(t *testing.T) {
	t.Parallel()
	b := setup(t, "pgoutage")
	c := b.collect()
	u, err := url.Parse(b.db.URL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := testenv.NewProxy(t, u.Host)
	u.Host = proxy.Addr()
	pool, err := pg.Connect(t.Context(), u.String(), 4)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	b.startRelayOn(pool, Config{RetryBackoff: 200 * time.Millisecond, LeaderPoll: 200 * time.Millisecond}, u.String())
	before := b.waitForSlot("the relay to open its slot")
	load := b.startLoader(8, 100, 2*time.Millisecond) // writes directly, not through the proxy
	testenv.Eventually(t, 30*time.Second, "records flowing", func() (bool, error) { return c.seen() > 300, nil })

	proxy.Cut()
	cutFor := time.Duration(3000+rand.IntN(3000)) * time.Millisecond
	time.Sleep(cutFor) // the outage itself
	proxy.Restore()

	testenv.Eventually(t, time.Minute, "the relay back on a new stream", func() (bool, error) {
		_, pid := b.slotHolder(t.Context())
		return pid != 0 && pid != before, nil
	})
	load.halt()
	dups := c.waitForAll(t, b.outbox(time.Time{}), 2*time.Minute)
	t.Logf("Postgres cut off for %s under load: %d rows in Kafka in per-key order, %d duplicates", cutFor, load.rows.Load(), dups)
}
