// Package consumertest runs consumer groups against the real Postgres and
// Kafka of internal/testenv, for the tests of consumers and its handlers,
// and holds the conformance suite every handler runs (Conformance).
// Records are produced straight to Kafka in the envelope format, so handler
// tests do not depend on ingest or the relay.
//
// One database per test binary (made on first use, dropped by Main); every
// test gets its own tenant, topics and group ids, so tests run in parallel.
package consumertest

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/url"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicehq/sluice/internal/consumers"
	"github.com/sluicehq/sluice/internal/envelope"
	"github.com/sluicehq/sluice/internal/kafka"
	"github.com/sluicehq/sluice/internal/keyring"
	"github.com/sluicehq/sluice/internal/pg"
	"github.com/sluicehq/sluice/internal/store/tenancy"
	"github.com/sluicehq/sluice/internal/testenv"
)

// Env is what the tests of one binary share.
type Env struct {
	DB      *testenv.Database
	Pool    *pgxpool.Pool
	Store   tenancy.Store
	Brokers []string
	Prefix  string // topic and group prefix of this binary
	admin   *kgo.Client
	Admin   *kadm.Client
}

var (
	once   sync.Once
	shared *Env
	setErr error
)

// Main runs the tests and drops the database: call it from TestMain.
func Main(m *testing.M) int {
	code := m.Run()
	if shared != nil {
		_ = kafka.DeleteTopicsWithPrefix(context.Background(), shared.Admin, shared.Prefix+".")
		shared.Pool.Close()
		shared.admin.Close()
		shared.DB.Drop()
	}
	return code
}

// Shared returns the binary's environment, or fails the test.
func Shared(tb testing.TB) *Env {
	tb.Helper()
	services := testenv.Require(tb)
	once.Do(func() {
		ctx := context.Background()
		db, err := services.NewDatabase(ctx, "consumers")
		if err != nil {
			setErr = err
			return
		}
		pool, err := pg.Connect(ctx, db.URL, 32)
		if err != nil {
			db.Drop()
			setErr = err
			return
		}
		ring, _ := keyring.Generate()
		parsed, _ := keyring.Parse(ring)
		admin, err := kgo.NewClient(kgo.SeedBrokers(services.Brokers...))
		if err != nil {
			setErr = err
			return
		}
		shared = &Env{DB: db, Pool: pool, Store: tenancy.Store{Pool: pool, Ring: parsed}, Brokers: services.Brokers,
			Prefix: "ct" + testenv.RandomSuffix(), admin: admin, Admin: kadm.NewClient(admin)}
	})
	if setErr != nil {
		tb.Fatalf("consumertest: %v", setErr)
	}
	return shared
}

// Fixture is one test's tenant, source and workspace.
type Fixture struct {
	TenantID, SourceID, Account string
	Customer, WorkspaceID       string
}

// Tenant creates a tenant with a source of kind and a workspace mapped from
// a customer.
func (e *Env) Tenant(tb testing.TB, kind string) Fixture {
	tb.Helper()
	ctx := context.Background()
	s := testenv.RandomSuffix()
	f := Fixture{Account: "acct_" + s, Customer: "cus_" + s}
	var err error
	if f.TenantID, err = e.Store.CreateTenant(ctx, tb.Name()); err != nil {
		tb.Fatal(err)
	}
	src := tenancy.NewSource{TenantID: f.TenantID, Kind: kind, Account: f.Account, Secret: "whsec_" + s + s + s}
	if kind == "hmac" {
		// A generic sender's locators: its records here are made, not
		// received, so any will do.
		src.Settings = []byte(`{"header":"X-Signature","eventId":"/id","eventType":"/type"}`)
	}
	if f.SourceID, err = e.Store.CreateSource(ctx, src); err != nil {
		tb.Fatal(err)
	}
	if f.WorkspaceID, err = e.Store.CreateWorkspace(ctx, f.TenantID, f.Customer, "ws"); err != nil {
		tb.Fatal(err)
	}
	return f
}

// Event is the envelope of an event of the fixture about one object.
func (f Fixture) Event(id, ceType, objectType, objectID string, at time.Time) envelope.Event {
	key := envelope.Key(f.TenantID, objectType, objectID)
	return envelope.Event{ID: id, Source: envelope.SourceURI(f.TenantID, f.SourceID), Type: ceType,
		Subject: objectID, Time: at, TenantID: f.TenantID, SourceID: f.SourceID, SourceAccount: f.Account,
		PartitionKey: key, ContentType: "application/json", TraceParent: envelope.NewTraceParent()}
}

// Record is a Kafka record carrying ev and body the way the relay writes it.
func Record(topic string, ev envelope.Event, body []byte) *kgo.Record {
	return &kgo.Record{Topic: topic, Key: []byte(ev.PartitionKey), Value: body, Headers: envelope.RecordHeaders(ev.Headers())}
}

// Topic creates a topic of the test's own with partitions partitions.
func (e *Env) Topic(tb testing.TB, name string, partitions int32) string {
	tb.Helper()
	topic := fmt.Sprintf("%s.%s.%s", e.Prefix, name, testenv.RandomSuffix())
	if err := kafka.EnsureTopics(context.Background(), e.Admin, kafka.TopicSpec{Partitions: partitions, Retention: time.Hour}, topic); err != nil {
		tb.Fatal(err)
	}
	return topic
}

// Produce writes recs synchronously (in order per partition) and returns
// them with their offsets.
func (e *Env) Produce(tb testing.TB, recs ...*kgo.Record) []*kgo.Record {
	tb.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(e.Brokers...), kgo.RecordPartitioner(kgo.StickyKeyPartitioner(nil)))
	if err != nil {
		tb.Fatal(err)
	}
	defer cl.Close()
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		tb.Fatal(err)
	}
	return recs
}

// Running is a group started by Run.
type Running struct {
	ID       string
	Registry *prometheus.Registry // the group's metrics
	Signals  *consumers.TestSignals
	// Ready is the group's readiness (Group.CheckDeployment).
	Ready  func(context.Context) error
	cancel context.CancelFunc
	done   chan struct{}
	err    error
}

// Stop ends the group after its in-flight batches and waits for it.
func (r *Running) Stop(tb testing.TB) {
	tb.Helper()
	r.cancel()
	<-r.done
	if r.err != nil {
		tb.Errorf("group %s: %v", r.ID, r.err)
	}
}

// Run starts a consumer group with h on cfg (Group defaults to a fresh id)
// over pool (the shared one when nil), stopped when the test ends.
func (e *Env) Run(tb testing.TB, cfg consumers.Config, h consumers.Handler, pool *pgxpool.Pool) *Running {
	tb.Helper()
	if cfg.Group == "" {
		cfg.Group = fmt.Sprintf("%s.group.%s", e.Prefix, testenv.RandomSuffix())
	}
	if cfg.Backoff == 0 {
		cfg.Backoff = 10 * time.Millisecond
	}
	if pool == nil {
		pool = e.Pool
	}
	if cfg.Signals == nil {
		cfg.Signals = consumers.NewTestSignals(tb)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	reg := prometheus.NewRegistry()
	g, err := consumers.NewGroup(cfg, log, pool, h, []kgo.Opt{kgo.SeedBrokers(e.Brokers...)}, reg)
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &Running{ID: cfg.Group, Registry: reg, Signals: cfg.Signals, Ready: g.CheckDeployment, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		r.err = g.Run(ctx)
	}()
	tb.Cleanup(func() { cancel(); <-r.done })
	return r
}

// WaitCommitted waits until group committed past every record.
func (e *Env) WaitCommitted(tb testing.TB, group string, timeout time.Duration, recs ...*kgo.Record) {
	tb.Helper()
	testenv.Eventually(tb, timeout, "group "+group+" to commit past the records", func() (bool, error) {
		return CommittedPast(e.Admin, group, recs...)
	})
}

// CommittedPast reports whether group's committed offsets are past every
// record, now.
func CommittedPast(adm *kadm.Client, group string, recs ...*kgo.Record) (bool, error) {
	offsets, err := adm.FetchOffsets(context.Background(), group)
	if err != nil {
		return false, err
	}
	for _, r := range recs {
		if o, ok := offsets.Lookup(r.Topic, r.Partition); !ok || o.At <= r.Offset {
			return false, nil
		}
	}
	return true, nil
}

// Count runs a count query.
func (e *Env) Count(tb testing.TB, query string, args ...any) int {
	tb.Helper()
	var n int
	if err := e.Pool.QueryRow(context.Background(), query, args...).Scan(&n); err != nil {
		tb.Fatalf("%s: %v", query, err)
	}
	return n
}

// Shuffled returns a shuffled copy of items.
func Shuffled[T any](items []T) []T {
	out := append([]T(nil), items...)
	rand.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// Reversed returns a reversed copy of items.
func Reversed[T any](items []T) []T {
	out := make([]T, len(items))
	for i, v := range items {
		out[len(items)-1-i] = v
	}
	return out
}

// WaitMarked waits for the group's signal that a batch ending at or past
// rec committed and was marked: no polling, and no need for the offset
// commit tick.
func (r *Running) WaitMarked(tb testing.TB, timeout time.Duration, rec *kgo.Record) {
	tb.Helper()
	r.Signals.Marked.WaitUntil(timeout, fmt.Sprintf("group %s: a batch marked past %s/%d/%d", r.ID, rec.Topic, rec.Partition, rec.Offset),
		func(last *kgo.Record) bool {
			return last.Topic == rec.Topic && last.Partition == rec.Partition && last.Offset >= rec.Offset
		})
}

// WaitFailures waits for n failed batch attempts and returns their errors.
func (r *Running) WaitFailures(tb testing.TB, n int, timeout time.Duration) []error {
	tb.Helper()
	deadline := time.Now().Add(timeout)
	var errs []error
	for len(errs) < n {
		r.Signals.Attempted.WaitUntil(time.Until(deadline), fmt.Sprintf("group %s: failed attempt %d of %d", r.ID, len(errs)+1, n),
			func(err error) bool {
				if err != nil {
					errs = append(errs, err)
				}
				return err != nil
			})
	}
	return errs
}

// Metric reads a counter or gauge of reg (a group's Registry).
func Metric(tb testing.TB, reg *prometheus.Registry, name string) float64 {
	tb.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		tb.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			if g := mf.GetMetric()[0].GetGauge(); g != nil {
				return g.GetValue()
			}
			return mf.GetMetric()[0].GetCounter().GetValue()
		}
	}
	tb.Fatalf("no metric %s", name)
	return 0
}

// InvoicePaid is a Stripe invoice.paid of f's tenant about invoiceID of
// customer, as the relay writes it: records a realistic handler (credits)
// applies, for the runtime's tests.
func InvoicePaid(f Fixture, topic, eventID, invoiceID, customer string) *kgo.Record {
	body := fmt.Appendf(nil, `{"id":%q,"object":"event","type":"invoice.paid","created":%d,"data":{"object":{"id":%q,"object":"invoice","customer":%q,"amount_paid":1000,"status":"paid"}}}`,
		eventID, time.Now().Unix(), invoiceID, customer)
	return Record(topic, f.Event(eventID, "stripe.invoice.paid", "invoice", invoiceID, time.Now()), body)
}

// Invoices are n paid invoices of f's customer, evt_i about in_i: keyed by
// invoice, so they spread over the topic's partitions.
func Invoices(f Fixture, topic string, n int) []*kgo.Record {
	recs := make([]*kgo.Record, n)
	for i := range recs {
		recs[i] = InvoicePaid(f, topic, fmt.Sprintf("evt_%d", i), fmt.Sprintf("in_%d", i), f.Customer)
	}
	return recs
}

// ViaProxy is dbURL with its host replaced by addr (a testenv proxy's), and
// the host it replaced, for the proxy to forward to.
func ViaProxy(tb testing.TB, dbURL, addr string) (proxied, host string) {
	tb.Helper()
	u, err := url.Parse(dbURL)
	if err != nil {
		tb.Fatal(err)
	}
	host, u.Host = u.Host, addr
	return u.String(), host
}
