package credits_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicehq/sluice/internal/consumers"
	"github.com/sluicehq/sluice/internal/consumers/consumertest"
	"github.com/sluicehq/sluice/internal/envelope"
	"github.com/sluicehq/sluice/internal/pg"
	"github.com/sluicehq/sluice/internal/testenv"
)

// Invariant 8 at the runtime: a permanently failing record among good ones,
// all on one partition, becomes a dead letter after MaxAttempts (row and
// outbox row for <group>.dlq with the original and the dlq headers); the
// records after it are applied.
func TestPoisonRecordIsDeadLetteredAndItsPartitionFlows(t *testing.T) {
	t.Parallel()
	env := consumertest.Shared(t)
	f := env.Tenant(t, "stripe")
	topic := env.Topic(t, "invoices", 1)
	var recs []*kgo.Record
	for i := range 10 {
		customer := f.Customer
		if i == 3 {
			customer = "cus_unmapped" // no workspace: permanent
		}
		recs = append(recs, consumertest.InvoicePaid(f, topic, fmt.Sprintf("evt_%d", i), fmt.Sprintf("in_%d", i), customer))
	}
	env.Produce(t, recs...)
	h := handler(topic)
	g := env.Run(t, consumers.Config{Topics: []string{topic}, MaxAttempts: 4}, h, nil)
	env.WaitCommitted(t, g.ID, time.Minute, recs...)

	if n := env.Count(t, `SELECT count(*) FROM credit_grants WHERE tenant_id = $1`, f.TenantID); n != 9 {
		t.Errorf("grants = %d, want 9 (every record but the poison, those after it included)", n)
	}
	var (
		offset          int64
		attempts        int
		reason          string
		first, last     time.Time
		dlqTopic        string
		headers         map[string]string
		originalHeaders map[string]string
	)
	err := env.Pool.QueryRow(context.Background(), `SELECT d."offset", d.attempts, d.reason, d.first_failed_at, d.last_failed_at, d.headers, o.topic, o.headers
		FROM dead_letters d JOIN outbox o ON o.headers->>'sluice_dlq_group' = d.consumer_group AND o.headers->>'sluice_dlq_offset' = d."offset"::text
		WHERE d.consumer_group = $1`, g.ID).Scan(&offset, &attempts, &reason, &first, &last, &originalHeaders, &dlqTopic, &headers)
	if err != nil {
		t.Fatalf("dead letter with its outbox row: %v", err)
	}
	if offset != recs[3].Offset || attempts != 4 || reason == "" || last.Before(first) {
		t.Errorf("dead letter at %d after %d attempts (%q, %s..%s)", offset, attempts, reason, first, last)
	}
	if dlqTopic != g.ID+".dlq" {
		t.Errorf("dlq topic = %s", dlqTopic)
	}
	for k, want := range map[string]string{
		envelope.HeaderID: "evt_3", envelope.HeaderType: "stripe.invoice.paid", consumers.HeaderDLQTopic: topic,
		consumers.HeaderDLQPartition: "0", consumers.HeaderDLQOffset: fmt.Sprint(recs[3].Offset),
		consumers.HeaderDLQGroup: g.ID, consumers.HeaderDLQAttempts: "4",
	} {
		if headers[k] != want {
			t.Errorf("dlq header %s = %q, want %q", k, headers[k], want)
		}
	}
	if headers[consumers.HeaderDLQReason] == "" || headers[consumers.HeaderDLQFirstFailed] == "" || originalHeaders[envelope.HeaderID] != "evt_3" {
		t.Errorf("dlq headers %v, original %v", headers, originalHeaders)
	}
}

// A database outage of 20 s during consumption (through a proxy the test
// cuts): transient errors are retried in place, nothing is dead-lettered or
// skipped, and every effect is there after.
func TestDatabaseOutageDelaysButLosesNothing(t *testing.T) {
	t.Parallel()
	env := consumertest.Shared(t)
	f := env.Tenant(t, "stripe")
	topic := env.Topic(t, "invoices", 3)
	_, host := consumertest.ViaProxy(t, env.DB.URL, "")
	proxy := testenv.NewProxy(t, host)
	proxied, _ := consumertest.ViaProxy(t, env.DB.URL, proxy.Addr())
	pool, err := pg.Connect(context.Background(), proxied, 8)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)

	const n = 300
	recs := consumertest.Invoices(f, topic, n)
	h := handler(topic)
	g := env.Run(t, consumers.Config{Topics: []string{topic}, MaxPoll: 20, MaxBackoff: 2 * time.Second}, h, pool)
	env.Produce(t, recs[:n/3]...)
	testenv.Eventually(t, time.Minute, "some grants before the outage", func() (bool, error) {
		return env.Count(t, `SELECT count(*) FROM credit_grants WHERE tenant_id = $1`, f.TenantID) > 0, nil
	})
	proxy.Cut()
	env.Produce(t, recs[n/3:]...)
	outage := time.Now()
	for time.Since(outage) < 20*time.Second {
		time.Sleep(time.Second) // the outage itself, not a synchronisation
	}
	proxy.Restore()
	env.WaitCommitted(t, g.ID, 2*time.Minute, recs...)

	if got := env.Count(t, `SELECT count(*) FROM credit_grants WHERE tenant_id = $1`, f.TenantID); got != n {
		t.Errorf("grants = %d, want %d", got, n)
	}
	balance, err := env.Store.Balance(context.Background(), f.WorkspaceID)
	if err != nil || balance != 100*n {
		t.Errorf("balance = %d (%v), want %d", balance, err, 100*n)
	}
	if got := env.Count(t, `SELECT count(*) FROM dead_letters WHERE consumer_group = $1`, g.ID); got != 0 {
		t.Errorf("dead letters = %d, want 0", got)
	}
}

// failing fails every record transiently and counts its attempts.
type failing struct {
	attempts atomic.Int64
}

func (h *failing) apply(context.Context, pgx.Tx, consumers.Record) error {
	h.attempts.Add(1)
	return errors.New("dependency down")
}

// Shutdown abandons a batch that is retrying: the group stops promptly and
// commits nothing past it, so the next owner starts from that record.
func TestShutdownAbandonsARetryingBatchWithoutCommitting(t *testing.T) {
	t.Parallel()
	env := consumertest.Shared(t)
	f := env.Tenant(t, "stripe")
	topic := env.Topic(t, "invoices", 1)
	recs := env.Produce(t, consumertest.InvoicePaid(f, topic, "evt_1", "in_1", f.Customer))
	h := &failing{}
	g := env.Run(t, consumers.Config{Topics: []string{topic}, Backoff: time.Second, MaxBackoff: time.Minute}, consumers.RecordFunc(h.apply), nil)
	testenv.Eventually(t, time.Minute, "retries", func() (bool, error) { return h.attempts.Load() >= 3, nil })

	stopped := make(chan struct{})
	go func() { g.Stop(t); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(30 * time.Second):
		t.Fatal("the group did not stop while its batch was retrying")
	}
	offsets, err := env.Admin.FetchOffsets(context.Background(), g.ID)
	if err != nil {
		t.Fatal(err)
	}
	if o, ok := offsets.Lookup(topic, 0); ok && o.At > recs[0].Offset {
		t.Errorf("committed %d past the failing record %d", o.At, recs[0].Offset)
	}
}

// stuckOn fails transiently, forever, on records of one partition, and
// counts what it applied elsewhere.
type stuckOn struct {
	partition int32
	applied   atomic.Int64
}

func (h *stuckOn) apply(_ context.Context, _ pgx.Tx, rec consumers.Record) error {
	if rec.Partition == h.partition {
		return errors.New("dependency down for this partition")
	}
	h.applied.Add(1)
	return nil
}

// A partition retrying in place holds only itself: its records wait (the
// partition is paused once enough are buffered), while the group's other
// partitions keep flowing poll after poll.
func TestARetryingPartitionDoesNotStallTheOthers(t *testing.T) {
	t.Parallel()
	env := consumertest.Shared(t)
	f := env.Tenant(t, "stripe")
	topic := env.Topic(t, "invoices", 2)
	h := &stuckOn{partition: 0}
	g := env.Run(t, consumers.Config{Topics: []string{topic}, MaxPoll: 10, Backoff: 50 * time.Millisecond, MaxBackoff: 200 * time.Millisecond}, consumers.RecordFunc(h.apply), nil)
	cl, err := kgo.NewClient(kgo.SeedBrokers(env.Brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for round := range 12 {
		stuck := consumertest.InvoicePaid(f, topic, fmt.Sprintf("evt_s%d", round), "in_s", f.Customer)
		stuck.Partition = 0
		free := consumertest.InvoicePaid(f, topic, fmt.Sprintf("evt_f%d", round), "in_f", f.Customer)
		free.Partition = 1
		// Several polls' worth for the stuck partition each round.
		batch := []*kgo.Record{free}
		for i := range 15 {
			r := *stuck
			r.Headers = append([]kgo.RecordHeader(nil), stuck.Headers...)
			r.Value = []byte(strings.Replace(string(stuck.Value), "evt_s", fmt.Sprintf("evt_s%d_", i), 1))
			batch = append(batch, &r)
		}
		if err := cl.ProduceSync(context.Background(), batch...).FirstErr(); err != nil {
			t.Fatal(err)
		}
		env.WaitCommitted(t, g.ID, 30*time.Second, free)
	}
	if got := h.applied.Load(); got != 12 {
		t.Errorf("applied %d records of the free partition, want 12", got)
	}
	offsets, err := env.Admin.FetchOffsets(context.Background(), g.ID)
	if err != nil {
		t.Fatal(err)
	}
	if o, ok := offsets.Lookup(topic, 0); ok && o.At > 0 {
		t.Errorf("the stuck partition committed %d, want nothing", o.At)
	}
}

// A group holds no more than its byte budget however many partitions it
// owns, give or take the fetch that crossed it, and a budget far smaller
// than the backlog only slows it: every record is applied and committed.
func TestByteBudgetBoundsWhatAGroupHolds(t *testing.T) {
	t.Parallel()
	env := consumertest.Shared(t)
	f := env.Tenant(t, "stripe")
	const partitions = 8
	topic := env.Topic(t, "invoices", partitions)
	recs := consumertest.Invoices(f, topic, 1600)
	// Kafka hands out whole record batches, at least one per partition a
	// fetch asks for, however small its limits: small uncompressed batches
	// keep that overshoot known.
	cl, err := kgo.NewClient(kgo.SeedBrokers(env.Brokers...), kgo.ProducerBatchMaxBytes(4<<10),
		kgo.ProducerBatchCompression(kgo.NoCompression()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	const limit = 32 << 10 // the backlog is about 20 times that
	h := &heldBytes{}
	g := env.Run(t, consumers.Config{Topics: []string{topic}, MaxBufferedBytes: limit}, consumers.RecordFunc(h.apply), nil)
	h.reg.Store(g.Registry)
	env.WaitCommitted(t, g.ID, time.Minute, recs...)
	if got := h.applied.Load(); got < int64(len(recs)) {
		t.Errorf("applied %d records, want %d", got, len(recs))
	}
	// A 4 KiB batch of these records counts for about 9 KiB held (the
	// record and header structures are counted too); without the budget
	// the group holds the whole backlog, over 2 MB.
	const slack = partitions * 16 << 10
	t.Logf("peak held %d bytes with a limit of %d", h.peak.Load(), limit)
	if peak := h.peak.Load(); peak == 0 || peak > limit+slack {
		t.Errorf("the group held up to %d bytes, want at most %d (%d and a record batch per partition)", peak, limit+slack, limit)
	}
}

// heldBytes applies nothing and samples the group's buffered bytes at
// every record, while the group holds the most.
type heldBytes struct {
	reg     atomic.Pointer[prometheus.Registry]
	applied atomic.Int64
	peak    atomic.Int64
}

func (h *heldBytes) apply(context.Context, pgx.Tx, consumers.Record) error {
	h.applied.Add(1)
	reg := h.reg.Load()
	if reg == nil {
		return nil
	}
	mfs, err := reg.Gather()
	if err != nil {
		return err
	}
	for _, mf := range mfs {
		if mf.GetName() == "sluice_consumer_buffered_bytes" {
			v := int64(mf.GetMetric()[0].GetGauge().GetValue())
			for old := h.peak.Load(); v > old && !h.peak.CompareAndSwap(old, v); old = h.peak.Load() {
			}
		}
	}
	return nil
}

// Offsets reach Kafka on a timer, not after each batch; a group that stops
// (shutdown, or its partitions revoked) commits what it applied before it
// lets go, so the next owner does not start over from the last tick.
func TestStoppingCommitsWhatWasApplied(t *testing.T) {
	t.Parallel()
	env := consumertest.Shared(t)
	f := env.Tenant(t, "stripe")
	topic := env.Topic(t, "invoices", 2)
	recs := env.Produce(t, consumertest.Invoices(f, topic, 40)...)
	g := env.Run(t, consumers.Config{Topics: []string{topic}}, handler(topic), nil)
	testenv.Eventually(t, time.Minute, "every grant", func() (bool, error) {
		return env.Count(t, `SELECT count(*) FROM credit_grants WHERE tenant_id = $1`, f.TenantID) == len(recs), nil
	})
	g.Stop(t)

	// No waiting: the commit happened before Stop returned.
	if ok, err := consumertest.CommittedPast(env.Admin, g.ID, recs...); err != nil || !ok {
		t.Fatalf("group %s has not committed past its records after a clean stop (error %v)", g.ID, err)
	}
}

// The relay may publish an outbox row twice; a poison record met twice is
// one dead letter, published once to the dead-letter topic (the chaos run
// found it kept at both positions).
func TestPoisonPublishedTwiceIsOneDeadLetter(t *testing.T) {
	t.Parallel()
	env := consumertest.Shared(t)
	f := env.Tenant(t, "stripe")
	topic := env.Topic(t, "invoices", 1)
	poison := func() *kgo.Record {
		r := consumertest.InvoicePaid(f, topic, "evt_twice", "in_twice", "cus_unmapped")
		r.Headers = append(r.Headers, kgo.RecordHeader{Key: envelope.HeaderOutboxID, Value: []byte("4242")})
		return r
	}
	recs := []*kgo.Record{poison(), consumertest.InvoicePaid(f, topic, "evt_between", "in_between", f.Customer), poison()}
	env.Produce(t, recs...)
	g := env.Run(t, consumers.Config{Topics: []string{topic}, MaxAttempts: 2}, handler(topic), nil)
	env.WaitCommitted(t, g.ID, time.Minute, recs...)
	if n := env.Count(t, `SELECT count(*) FROM dead_letters WHERE consumer_group = $1`, g.ID); n != 1 {
		t.Errorf("dead letters = %d, want 1 for one record published twice", n)
	}
	if n := env.Count(t, `SELECT count(*) FROM outbox WHERE headers->>'sluice_dlq_group' = $1`, g.ID); n != 1 {
		t.Errorf("dead-letter outbox rows = %d, want 1", n)
	}
}

// setBased refuses any call holding the poison invoice with a permanent
// failure that names no record, as a set-based statement refused by one
// row's data does; alone, the poison fails as itself.
type setBased struct{ consumers.Local }

func (setBased) Begin(pgx.Tx) consumers.Batch { return setBasedBatch{} }

type setBasedBatch struct{}

func (setBasedBatch) Apply(_ context.Context, recs []consumers.Record) error {
	for _, r := range recs {
		if r.Event.Subject == "in_poison" {
			if len(recs) > 1 {
				return consumers.Permanentf("set-based statement refused a row")
			}
			return consumers.Permanentf("the poison itself")
		}
	}
	return nil
}

func (setBasedBatch) Settle(context.Context) error { return nil }

// A set-based batch refused for one record's data, naming none, is applied
// record by record to find it: the poison alone is dead-lettered, with its
// own failure as the reason, and the group commits past the batch.
func TestASetBasedRefusalNamingNoRecordIsSearchedRecordByRecord(t *testing.T) {
	t.Parallel()
	env := consumertest.Shared(t)
	f := env.Tenant(t, "stripe")
	topic := env.Topic(t, "invoices", 1)
	recs := append(consumertest.Invoices(f, topic, 5), consumertest.InvoicePaid(f, topic, "evt_poison", "in_poison", f.Customer))
	recs = append(recs, consumertest.Invoices(f, topic, 3)...)
	env.Produce(t, recs...)
	g := env.Run(t, consumers.Config{Topics: []string{topic}}, setBased{}, nil)
	env.WaitCommitted(t, g.ID, time.Minute, recs...)
	if n := env.Count(t, `SELECT count(*) FROM dead_letters WHERE consumer_group = $1`, g.ID); n != 1 {
		t.Errorf("dead letters = %d, want the poison's", n)
	}
	if n := env.Count(t, `SELECT count(*) FROM dead_letters WHERE consumer_group = $1 AND headers->>'ce_id' = 'evt_poison' AND reason = 'the poison itself'`, g.ID); n != 1 {
		t.Error("the poison's dead letter does not give its own failure")
	}
	if n := consumertest.Metric(t, g.Registry, "sluice_consumer_batches_one_by_one_total"); n < 1 {
		t.Errorf("batches applied record by record = %v, want at least 1", n)
	}
}
