package credits_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicehq/sluice/command/internal/effects/credits"
	"github.com/sluicehq/sluice/effect/effecttest"
	"github.com/sluicehq/sluice/internal/consumers"
	"github.com/sluicehq/sluice/internal/consumers/consumertest"
	"github.com/sluicehq/sluice/internal/envelope"
)

func TestMain(m *testing.M) { os.Exit(effecttest.Main(m)) }

func paid(f consumertest.Fixture, topic, eventID, invoiceID string) *kgo.Record {
	body := fmt.Appendf(nil, `{"id":%q,"object":"event","type":"invoice.paid","created":%d,"data":{"object":{"id":%q,"object":"invoice","customer":%q,"amount_paid":1000,"status":"paid"}}}`,
		eventID, time.Now().Unix(), invoiceID, f.Customer)
	return consumertest.Record(topic, f.Event(eventID, "stripe.invoice.paid", "invoice", invoiceID, time.Now()), body)
}

// refunded is a charge.refunded routed to its invoice, as ingest routes it.
func refunded(f consumertest.Fixture, topic, eventID, invoiceID string) *kgo.Record {
	body := fmt.Appendf(nil, `{"id":%q,"object":"event","type":"charge.refunded","created":%d,"data":{"object":{"id":"ch_%s","object":"charge","invoice":%q,"amount_refunded":1000,"refunded":true}}}`,
		eventID, time.Now().Unix(), eventID, invoiceID)
	return consumertest.Record(topic, f.Event(eventID, "stripe.charge.refunded", "invoice", invoiceID, time.Now()), body)
}

// handler is the credits group as the runtime runs it, its intents under
// the topic prefix given.
func handler(prefix string) consumers.Handler {
	h, _ := credits.Group().Runtime(prefix).(consumers.Handler)
	return h
}

// The kit's scenarios, for credits: one grant and one e-mail per invoice
// whatever the number of events and deliveries (invariants 3 and 6), a
// refund its own operation, the balances a counter moved in workspace
// order. Arrival order matters here by design: a refund that arrives first
// stops the grant (TestRefundReversesTheGrantOnce).
func TestKitScenarios(t *testing.T) {
	t.Parallel()
	paidEvent := func(f effecttest.Fixture, id, invoice string) effecttest.Event {
		return effecttest.Event{ID: id, Type: "stripe.invoice.paid", ObjectType: "invoice",
			Body: fmt.Appendf(nil, `{"id":%q,"object":"event","type":"invoice.paid","created":%d,"data":{"object":{"id":%q,"object":"invoice","customer":%q,"amount_paid":1000,"status":"paid"}}}`,
				id, time.Now().Unix(), invoice, f.Customer)}
	}
	refundEvent := func(id, invoice string) effecttest.Event {
		return effecttest.Event{ID: id, Type: "stripe.charge.refunded", ObjectType: "invoice",
			Body: fmt.Appendf(nil, `{"id":%q,"object":"event","type":"charge.refunded","created":%d,"data":{"object":{"id":"ch_%s","object":"charge","invoice":%q,"amount_refunded":1000,"refunded":true}}}`,
				id, time.Now().Unix(), id, invoice)}
	}
	history := func(name, final string, steps ...string) effecttest.History {
		return effecttest.History{Name: name, Final: final, Events: func(f effecttest.Fixture, invoice string) []effecttest.Event {
			var evs []effecttest.Event
			for _, s := range steps {
				if strings.HasPrefix(s, "evt_r") {
					evs = append(evs, refundEvent(s+"_"+invoice, invoice))
				} else {
					evs = append(evs, paidEvent(f, s+"_"+invoice, invoice))
				}
			}
			return evs
		}}
	}
	effecttest.Run(t, effecttest.Suite{
		Group: credits.Group(),
		Kind:  "stripe",
		Setup: func(tb testing.TB, f effecttest.Fixture) {
			if _, err := f.DB.Exec(context.Background(), `INSERT INTO balances (workspace_id, tenant_id, credits) VALUES ($1, $2, 0)`,
				f.WorkspaceID, f.TenantID); err != nil {
				tb.Fatal(err)
			}
		},
		Histories: []effecttest.History{
			history("paid", "granted 100, reversed 0; e-mails 1 granted, 0 reversed", "evt_1"),
			history("paid, announced twice", "granted 100, reversed 0; e-mails 1 granted, 0 reversed", "evt_1", "evt_2"),
			history("paid then refunded twice", "granted 100, reversed 100; e-mails 1 granted, 1 reversed", "evt_1", "evt_r1", "evt_r2"),
		},
		State: func(tb testing.TB, f effecttest.Fixture, invoiceID string) string {
			var granted, reversed, grantMails, reverseMails int
			err := f.DB.QueryRow(context.Background(), `SELECT
				  (SELECT coalesce(sum(credits), 0) FROM credit_grants WHERE tenant_id = $1 AND object_id = $2),
				  (SELECT coalesce(sum(credits), 0) FROM credit_reversals WHERE tenant_id = $1 AND object_id = $2),
				  (SELECT count(*) FROM outbox WHERE headers->>'ce_tenantid' = $1::text AND headers->>'ce_id' LIKE '%/' || $2 || '/%'
				     AND headers->>'ce_type' = 'sluice.email.credits_granted'),
				  (SELECT count(*) FROM outbox WHERE headers->>'ce_tenantid' = $1::text AND headers->>'ce_id' LIKE '%/' || $2 || '/%'
				     AND headers->>'ce_type' = 'sluice.email.credits_reversed')`,
				f.TenantID, invoiceID).Scan(&granted, &reversed, &grantMails, &reverseMails)
			if err != nil {
				return err.Error()
			}
			return fmt.Sprintf("granted %d, reversed %d; e-mails %d granted, %d reversed", granted, reversed, grantMails, reverseMails)
		},
		Shared: &effecttest.Shared{Lock: `SELECT 1 FROM balances WHERE tenant_id = $1 FOR UPDATE`},
	})
}

// A refund is its own operation: it reverses the grant once, whatever the
// number of refund events; a refund that arrives before the grant stops it.
func TestRefundReversesTheGrantOnce(t *testing.T) {
	t.Parallel()
	env := consumertest.Shared(t)
	f := env.Tenant(t, "stripe")
	topic := env.Topic(t, "invoices", 3)
	h := handler(topic)

	recs := env.Produce(t,
		paid(f, topic, "evt_p1", "in_1"), paid(f, topic, "evt_p2", "in_2"), paid(f, topic, "evt_p3", "in_3"),
		refunded(f, topic, "evt_r1", "in_1"), refunded(f, topic, "evt_r1b", "in_1"), paid(f, topic, "evt_p1b", "in_1"),
		refunded(f, topic, "evt_r4", "in_4"), paid(f, topic, "evt_p4", "in_4"),
	)
	g := env.Run(t, consumers.Config{Topics: []string{topic}}, h, nil)
	env.WaitCommitted(t, g.ID, time.Minute, recs...)

	balance, err := env.Store.Balance(t.Context(), f.WorkspaceID)
	if err != nil {
		t.Fatal(err)
	}
	if balance != 200 {
		t.Errorf("balance = %d, want 200 (in_2 and in_3; in_1 refunded, in_4 refunded before paid)", balance)
	}
	if n := env.Count(t, `SELECT count(*) FROM credit_grants WHERE tenant_id = $1`, f.TenantID); n != 3 {
		t.Errorf("grants = %d, want 3", n)
	}
	if n := env.Count(t, `SELECT count(*) FROM credit_reversals WHERE tenant_id = $1 AND object_id = 'in_1' AND credits = 100`, f.TenantID); n != 1 {
		t.Errorf("reversals of in_1 = %d, want 1", n)
	}
	if n := env.Count(t, `SELECT count(*) FROM credit_reversals WHERE tenant_id = $1 AND object_id = 'in_4' AND credits = 0 AND grant_id IS NULL`, f.TenantID); n != 1 {
		t.Errorf("reversals of in_4 = %d, want 1 with nothing taken back", n)
	}
	if n := env.Count(t, `SELECT count(*) FROM outbox WHERE topic = $1 AND headers->>'ce_tenantid' = $2 AND headers->>'ce_type' = 'sluice.email.credits_reversed'`,
		envelope.Topics{Prefix: topic}.Resource("notifications"), f.TenantID); n != 1 {
		t.Errorf("reversal e-mails = %d, want 1", n)
	}
	// in_1's records share a partition and a batch: its grant's e-mail is
	// written (and relayed) before its refund's, as they happened.
	if n := env.Count(t, `SELECT count(*) FROM outbox g, outbox r
		WHERE g.topic = $1 AND g.headers->>'ce_tenantid' = $2 AND g.headers->>'ce_type' = 'sluice.email.credits_granted' AND g.headers->>'ce_id' LIKE '%in_1/%'
		  AND r.topic = $1 AND r.headers->>'ce_tenantid' = $2 AND r.headers->>'ce_type' = 'sluice.email.credits_reversed' AND g.id < r.id`,
		envelope.Topics{Prefix: topic}.Resource("notifications"), f.TenantID); n != 1 {
		t.Errorf("in_1's grant e-mail before its refund e-mail: %d pairs, want 1", n)
	}
}

// Batches of twelve partitions granting to the same workspaces at once wait
// for each other's balance locks but never deadlock (the database counts
// deadlocks; none may appear), and every grant lands.
func TestConcurrentPartitionsNeverDeadlockOnBalances(t *testing.T) {
	t.Parallel()
	env := consumertest.Shared(t)
	f := env.Tenant(t, "stripe")
	topic := env.Topic(t, "invoices", 12)
	var customers []string
	for i := range 40 {
		c := fmt.Sprintf("%s_%d", f.Customer, i)
		if _, err := env.Store.CreateWorkspace(t.Context(), f.TenantID, c, "ws"); err != nil {
			t.Fatal(err)
		}
		customers = append(customers, c)
	}
	var recs []*kgo.Record
	for i := range 3000 {
		rec := paid(f, topic, fmt.Sprintf("evt_%d", i), fmt.Sprintf("in_%d", i))
		rec.Value = []byte(strings.Replace(string(rec.Value), f.Customer, customers[i%len(customers)], 1))
		recs = append(recs, rec)
	}
	deadlocks := func() int {
		return env.Count(t, `SELECT deadlocks::int FROM pg_stat_database WHERE datname = current_database()`)
	}
	before := deadlocks()
	env.Produce(t, recs...)
	// Small polls make many small batches, so many settle at once, each
	// encoding into buffers an earlier one gave back.
	g := env.Run(t, consumers.Config{Topics: []string{topic}, MaxPoll: 120}, handler(topic), nil)
	env.WaitCommitted(t, g.ID, 2*time.Minute, recs...)
	if n := env.Count(t, `SELECT sum(credits)::int FROM balances WHERE tenant_id = $1`, f.TenantID); n != 100*len(recs) {
		t.Errorf("balances sum to %d, want %d", n, 100*len(recs))
	}
	// Each customer's invoices went to its own workspace.
	each := 100 * len(recs) / len(customers)
	if n := env.Count(t, `SELECT count(*) FROM balances WHERE tenant_id = $1 AND credits = $2`, f.TenantID, each); n != len(customers) {
		t.Errorf("%d of %d workspaces hold %d credits", n, len(customers), each)
	}
	if after := deadlocks(); after != before {
		t.Errorf("%d deadlocks while applying", after-before)
	}
}

// counted is the credits handler, counting how its batches were applied.
type counted struct {
	consumers.Handler
	setBased, oneByOne atomic.Int64
}

func (c *counted) Begin(tx pgx.Tx) consumers.Batch {
	return countedBatch{Batch: c.Handler.Begin(tx), c: c}
}

type countedBatch struct {
	consumers.Batch
	c *counted
}

// Apply counts calls with several records as set-based, with one as one by
// one (this test's batch is all of the topic).
func (b countedBatch) Apply(ctx context.Context, recs []consumers.Record) error {
	if len(recs) > 1 {
		b.c.setBased.Add(1)
	} else {
		b.c.oneByOne.Add(1)
	}
	return b.Batch.Apply(ctx, recs)
}

// A set-based batch mixing new invoices, events already applied (a rewind),
// new events about invoices already granted, copies within the batch and one
// two poison records (their customers map to no workspace): the set-based
// batch names both at once, each is dead-lettered with its own customer in
// its reason (never applying the batch record by record), and every good
// invoice is granted exactly once, with one e-mail; the group commits past
// the whole batch.
func TestSetBasedBatchWithDuplicatesAndPoison(t *testing.T) {
	t.Parallel()
	env := consumertest.Shared(t)
	f := env.Tenant(t, "stripe")
	topic := env.Topic(t, "invoices", 1)
	notifications := envelope.Topics{Prefix: topic}.Resource("notifications")

	var first []*kgo.Record
	for i := range 5 {
		first = append(first, paid(f, topic, fmt.Sprintf("evt_a%d", i), fmt.Sprintf("in_%d", i)))
	}
	env.Produce(t, first...)
	before := env.Run(t, consumers.Config{Topics: []string{topic}}, handler(topic), nil)
	env.WaitCommitted(t, before.ID, time.Minute, first...)
	before.Stop(t)

	var second []*kgo.Record
	for i := range 5 { // new events about the invoices granted above
		second = append(second, paid(f, topic, fmt.Sprintf("evt_b%d", i), fmt.Sprintf("in_%d", i)))
	}
	for i := 5; i < 25; i++ {
		second = append(second, paid(f, topic, fmt.Sprintf("evt_c%d", i), fmt.Sprintf("in_%d", i)))
		if i == 12 || i == 20 {
			poison := paid(f, topic, fmt.Sprintf("evt_poison%d", i), fmt.Sprintf("in_poison%d", i))
			poison.Value = []byte(strings.Replace(string(poison.Value), f.Customer, fmt.Sprintf("cus_unmapped%d", i), 1))
			second = append(second, poison)
		}
		if i%4 == 0 { // the same invoice again, within the batch
			second = append(second, paid(f, topic, fmt.Sprintf("evt_d%d", i), fmt.Sprintf("in_%d", i)))
		}
	}
	env.Produce(t, second...)

	// A new group reads the topic from the start: all of it is one batch.
	h := &counted{Handler: handler(topic)}
	g := env.Run(t, consumers.Config{Topics: []string{topic}, MaxAttempts: 2}, h, nil)
	all := append(append([]*kgo.Record(nil), first...), second...)
	env.WaitCommitted(t, g.ID, time.Minute, all...)

	if n := env.Count(t, `SELECT count(*) FROM credit_grants WHERE tenant_id = $1`, f.TenantID); n != 25 {
		t.Errorf("grants = %d, want 25", n)
	}
	if n := env.Count(t, `SELECT count(DISTINCT object_id) FROM credit_grants WHERE tenant_id = $1`, f.TenantID); n != 25 {
		t.Errorf("granted invoices = %d, want 25", n)
	}
	if n := env.Count(t, `SELECT count(*) FROM credit_grants WHERE tenant_id = $1 AND object_id = 'in_8' AND event_id = 'evt_c8'`, f.TenantID); n != 1 {
		t.Errorf("in_8 granted by its first event: %d rows, want 1", n)
	}
	balance, err := env.Store.Balance(t.Context(), f.WorkspaceID)
	if err != nil || balance != 2500 {
		t.Errorf("balance = %d (%v), want 2500", balance, err)
	}
	if n := env.Count(t, `SELECT count(*) FROM outbox WHERE topic = $1 AND headers->>'ce_tenantid' = $2`, notifications, f.TenantID); n != 25 {
		t.Errorf("e-mail intents = %d, want 25", n)
	}
	if n := env.Count(t, `SELECT count(*) FROM dead_letters WHERE consumer_group = $1`, g.ID); n != 2 {
		t.Errorf("dead letters of the group = %d, want the 2 poison records", n)
	}
	for _, r := range second {
		if !strings.Contains(string(r.Value), "cus_unmapped") {
			continue
		}
		id := envelope.HeaderMap(r.Headers)["ce_id"]
		customer := "cus_unmapped" + strings.TrimPrefix(id, "evt_poison")
		if n := env.Count(t, `SELECT count(*) FROM dead_letters WHERE consumer_group = $1 AND "offset" = $2 AND headers->>'ce_id' = $3 AND reason LIKE '%' || $4`,
			g.ID, r.Offset, id, customer); n != 1 {
			t.Errorf("poison %s (offset %d) is not a dead letter naming its customer %s", id, r.Offset, customer)
		}
	}
	// The handler names every unmapped customer of the batch at once: the
	// set-based batch is never applied record by record to find them.
	if h.setBased.Load() == 0 || h.oneByOne.Load() != 0 {
		t.Errorf("set-based batches %d, records applied one by one %d: want set-based only", h.setBased.Load(), h.oneByOne.Load())
	}
}

// Invariant 3 across batches: a new event about an invoice already granted
// by an earlier batch (a repair, a manual replay) grants nothing. Within
// one batch the handler's own dedup would hide a business key that names
// the event; here only the database's business key can refuse it.
func TestAnotherEventInALaterBatchGrantsNothing(t *testing.T) {
	t.Parallel()
	env := consumertest.Shared(t)
	f := env.Tenant(t, "stripe")
	topic := env.Topic(t, "invoices", 1)
	topics := envelope.Topics{Prefix: topic}
	g := env.Run(t, consumers.Config{Topics: []string{topic}}, handler(topics.Prefix), nil)
	first := env.Produce(t, paid(f, topic, "evt_1", "in_1"))
	g.WaitMarked(t, time.Minute, first[0])
	second := env.Produce(t, paid(f, topic, "evt_2", "in_1"))
	g.WaitMarked(t, time.Minute, second[0])

	if n := env.Count(t, `SELECT count(*) FROM credit_grants WHERE tenant_id = $1`, f.TenantID); n != 1 {
		t.Errorf("grants = %d, want 1", n)
	}
	if balance, err := env.Store.Balance(t.Context(), f.WorkspaceID); err != nil || balance != 100 {
		t.Errorf("balance = %d (%v), want 100", balance, err)
	}
	if n := env.Count(t, `SELECT count(*) FROM outbox WHERE topic = $1 AND headers->>'ce_tenantid' = $2`,
		topics.Resource("notifications"), f.TenantID); n != 1 {
		t.Errorf("e-mail intents = %d, want 1", n)
	}
}
