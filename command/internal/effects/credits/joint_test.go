package credits_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicehq/sluice/internal/consumers"
	"github.com/sluicehq/sluice/internal/consumers/consumertest"
	"github.com/sluicehq/sluice/internal/testenv"
)

// gated wraps a handler: the first transaction holds in its first Apply
// until the test opens the gate, and every committed transaction's
// partitions are written down.
type gated struct {
	consumers.Handler
	held chan struct{} // closed once the first transaction holds
	gate chan struct{} // closed by open to let it go on
	// Not a sync.Once: its Do would make every other transaction's first
	// Apply wait for the held one too.
	taken atomic.Bool
	shut  sync.Once

	mu        sync.Mutex
	committed [][]int32 // per committed transaction, its records' partitions
}

func newGated(h consumers.Handler) *gated {
	return &gated{Handler: h, held: make(chan struct{}), gate: make(chan struct{})}
}

func (g *gated) Begin(tx pgx.Tx) consumers.Batch {
	return &gatedBatch{Batch: g.Handler.Begin(tx), g: g}
}

// open lets the held transaction go on; a test also does so in its
// cleanup, so a failed assertion does not leave the group stuck.
func (g *gated) open() { g.shut.Do(func() { close(g.gate) }) }

func (g *gated) transactions() [][]int32 {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.committed)
}

type gatedBatch struct {
	consumers.Batch
	g          *gated
	partitions []int32
}

func (b *gatedBatch) Apply(ctx context.Context, recs []consumers.Record) error {
	if b.g.taken.CompareAndSwap(false, true) {
		close(b.g.held)
		<-b.g.gate
	}
	for _, r := range recs {
		b.partitions = append(b.partitions, r.Partition)
	}
	return b.Batch.Apply(ctx, recs)
}

// Settle is the last step before COMMIT; a transaction whose COMMIT then
// failed would be written down wrongly, which these tests do not cause.
func (b *gatedBatch) Settle(ctx context.Context) error {
	if err := b.Batch.Settle(ctx); err != nil {
		return err
	}
	b.g.mu.Lock()
	b.g.committed = append(b.g.committed, b.partitions)
	b.g.mu.Unlock()
	return nil
}

// onPartition places r on partition p.
func onPartition(r *kgo.Record, p int32) *kgo.Record {
	r.Partition = p
	return r
}

func produceTo(t *testing.T, brokers []string, recs ...*kgo.Record) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// holdFirst applies a first record on partition 0 in a transaction that
// holds until h's gate opens, so the group's one transaction is taken.
func holdFirst(t *testing.T, env *consumertest.Env, f consumertest.Fixture, topic string, h *gated) *kgo.Record {
	t.Helper()
	first := onPartition(consumertest.InvoicePaid(f, topic, "evt_first", "in_first", f.Customer), 0)
	produceTo(t, env.Brokers, first)
	select {
	case <-h.held:
	case <-time.After(time.Minute):
		t.Fatal("the first transaction never began")
	}
	return first
}

// heldGroup runs a credits group over a topic of n partitions with cfg
// (its Topics set here) whose first transaction, on partition 0, is held
// open until the returned handler's gate opens (at the latest at cleanup).
type heldGroup struct {
	env   *consumertest.Env
	f     consumertest.Fixture
	topic string
	h     *gated
	g     *consumertest.Running
	first *kgo.Record
}

func runHeld(t *testing.T, partitions int32, cfg consumers.Config) heldGroup {
	t.Helper()
	env := consumertest.Shared(t)
	f := env.Tenant(t, "stripe")
	topic := env.Topic(t, "invoices", partitions)
	h := newGated(handler(topic))
	cfg.Topics = []string{topic}
	g := env.Run(t, cfg, h, nil)
	t.Cleanup(h.open)
	return heldGroup{env: env, f: f, topic: topic, h: h, g: g, first: holdFirst(t, env, f, topic, h)}
}

// While the group's transactions are all open, the batches that become
// ready on its other partitions wait together and share the next
// transaction: one BEGIN and COMMIT for all of them, each partition's
// records in order.
func TestBatchesWaitingForATransactionShareTheNext(t *testing.T) {
	t.Parallel()
	hg := runHeld(t, 4, consumers.Config{Transactions: 1})
	env, f, topic, h, g, first := hg.env, hg.f, hg.topic, hg.h, hg.g, hg.first
	var later []*kgo.Record
	for p := int32(1); p < 4; p++ {
		for i := range 3 {
			later = append(later, onPartition(consumertest.InvoicePaid(f, topic, fmt.Sprintf("evt_%d_%d", p, i), fmt.Sprintf("in_%d_%d", p, i), f.Customer), p))
		}
	}
	produceTo(t, env.Brokers, later...)
	testenv.Eventually(t, time.Minute, "three partitions' batches waiting", func() (bool, error) {
		return consumertest.Metric(t, g.Registry, "sluice_consumer_batches_waiting") == 3, nil
	})
	h.open()
	env.WaitCommitted(t, g.ID, time.Minute, append(later, first)...)

	txs := h.transactions()
	if len(txs) != 2 {
		t.Fatalf("transactions %v, want 2: the first, then one shared by partitions 1-3", txs)
	}
	shared := slices.Clone(txs[1])
	if len(shared) != 9 {
		t.Errorf("the shared transaction applied %d records, want 9", len(shared))
	}
	slices.Sort(shared)
	if got := slices.Compact(shared); !slices.Equal(got, []int32{1, 2, 3}) {
		t.Errorf("the shared transaction held partitions %v, want 1, 2 and 3", got)
	}
	if n := env.Count(t, `SELECT count(*) FROM credit_grants WHERE tenant_id = $1`, f.TenantID); n != 10 {
		t.Errorf("grants = %d, want 10", n)
	}
	if w := consumertest.Metric(t, g.Registry, "sluice_consumer_batches_waiting"); w != 0 {
		t.Errorf("batches waiting = %v after all were applied", w)
	}
}

// A record that fails a shared transaction costs the partitions sharing it
// nothing: each batch is then applied alone, the good ones at once, and the
// record at fault is dead-lettered after exactly its own attempts (the
// shared failure is nobody's attempt).
func TestAFailedSharedTransactionIsAppliedAloneByEachPartition(t *testing.T) {
	t.Parallel()
	const attempts = 3
	hg := runHeld(t, 3, consumers.Config{Transactions: 1, MaxAttempts: attempts})
	env, f, topic, h, g, first := hg.env, hg.f, hg.topic, hg.h, hg.g, hg.first
	later := []*kgo.Record{
		onPartition(consumertest.InvoicePaid(f, topic, "evt_a", "in_a", f.Customer), 1),
		onPartition(consumertest.InvoicePaid(f, topic, "evt_b", "in_b", f.Customer), 1),
		onPartition(consumertest.InvoicePaid(f, topic, "evt_poison", "in_poison", "cus_unmapped"), 2), // no workspace: permanent
		onPartition(consumertest.InvoicePaid(f, topic, "evt_c", "in_c", f.Customer), 2),
	}
	produceTo(t, env.Brokers, later...)
	testenv.Eventually(t, time.Minute, "two partitions' batches waiting", func() (bool, error) {
		return consumertest.Metric(t, g.Registry, "sluice_consumer_batches_waiting") == 2, nil
	})
	h.open()
	env.WaitCommitted(t, g.ID, time.Minute, append(later, first)...)

	if n := consumertest.Metric(t, g.Registry, "sluice_consumer_shared_batches_failed_total"); n != 1 {
		t.Errorf("failed shared transactions = %v, want 1", n)
	}
	if n := env.Count(t, `SELECT count(*) FROM credit_grants WHERE tenant_id = $1`, f.TenantID); n != 4 {
		t.Errorf("grants = %d, want 4 (every invoice but the poison)", n)
	}
	var offset int64
	var tried int
	if err := env.Pool.QueryRow(context.Background(), `SELECT "offset", attempts FROM dead_letters WHERE consumer_group = $1`, g.ID).Scan(&offset, &tried); err != nil {
		t.Fatalf("the poison's dead letter: %v", err)
	}
	if offset != later[2].Offset || tried != attempts {
		t.Errorf("dead letter at offset %d after %d attempts, want %d after %d", offset, tried, later[2].Offset, attempts)
	}
	// The handler named the poison, so no batch was searched record by
	// record for it; the attempts above are partition 2's alone.
	if n := consumertest.Metric(t, g.Registry, "sluice_consumer_batches_one_by_one_total"); n != 0 {
		t.Errorf("batches applied record by record = %v, want 0", n)
	}
	// Partition 1's batch went alone right after the shared failure and
	// committed in one transaction of its own.
	if !slices.ContainsFunc(h.transactions(), func(ps []int32) bool { return slices.Equal(ps, []int32{1, 1}) }) {
		t.Errorf("transactions %v: none applied partition 1's batch alone", h.transactions())
	}
}

// Under live load a group keeps one transaction open: small batches of
// other partitions wait for it, however many transactions the group may
// open, and then share the next one.
func TestLiveBatchesWaitForTheOpenTransaction(t *testing.T) {
	t.Parallel()
	hg := runHeld(t, 3, consumers.Config{Transactions: 3, SharePatience: time.Hour})
	env, f, topic, h, g, first := hg.env, hg.f, hg.topic, hg.h, hg.g, hg.first
	later := []*kgo.Record{
		onPartition(consumertest.InvoicePaid(f, topic, "evt_a", "in_a", f.Customer), 1),
		onPartition(consumertest.InvoicePaid(f, topic, "evt_b", "in_b", f.Customer), 2),
	}
	produceTo(t, env.Brokers, later...)
	testenv.Eventually(t, time.Minute, "two partitions' batches waiting", func() (bool, error) {
		return consumertest.Metric(t, g.Registry, "sluice_consumer_batches_waiting") == 2, nil
	})
	if txs := h.transactions(); len(txs) != 0 {
		t.Fatalf("committed %v while the first transaction was open: small batches opened another", txs)
	}
	h.open()
	env.WaitCommitted(t, g.ID, time.Minute, append(later, first)...)
	if txs := h.transactions(); len(txs) != 2 || len(txs[1]) != 2 {
		t.Errorf("transactions %v, want the first, then one shared by partitions 1 and 2", txs)
	}
}

// A backlog's batches (a share of an eighth of MaxPoll records) and batches
// that waited SharePatience for the open transaction open another at once.
func TestABacklogOrAWaitPastPatienceOpensAnotherTransaction(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name     string
		records  int
		patience time.Duration
	}{
		{"backlog", 4, time.Hour}, // MaxPoll 16: 2 records make a backlog's share
		{"patience", 1, 50 * time.Millisecond},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			hg := runHeld(t, 2, consumers.Config{Transactions: 2, MaxPoll: 16, SharePatience: c.patience})
			env, f, topic, h, g, first := hg.env, hg.f, hg.topic, hg.h, hg.g, hg.first
			var later []*kgo.Record
			for i := range c.records {
				later = append(later, onPartition(consumertest.InvoicePaid(f, topic, fmt.Sprintf("evt_%d", i), fmt.Sprintf("in_%d", i), f.Customer), 1))
			}
			produceTo(t, env.Brokers, later...)
			// Committed while the first transaction is still held open.
			env.WaitCommitted(t, g.ID, time.Minute, later...)
			if txs := h.transactions(); len(txs) == 0 || slices.Contains(slices.Concat(txs...), 0) {
				t.Errorf("transactions %v, want partition 1's committed beside the open first", txs)
			}
			h.open()
			env.WaitCommitted(t, g.ID, time.Minute, first)
		})
	}
}
