package reconcile_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stripe/stripe-go/v82/webhook"

	"github.com/sluicehq/sluice/internal/ingest"
	"github.com/sluicehq/sluice/internal/ingest/reconcile"
	"github.com/sluicehq/sluice/internal/keyring"
	"github.com/sluicehq/sluice/internal/pg"
	"github.com/sluicehq/sluice/internal/provider"
	"github.com/sluicehq/sluice/internal/provider/kinds"
	"github.com/sluicehq/sluice/internal/provider/kinds/stripe/stripetest"
	"github.com/sluicehq/sluice/internal/store/tenancy"
	"github.com/sluicehq/sluice/internal/testenv"
	"github.com/sluicehq/sluice/schemas"
)

var dbURL string

func TestMain(m *testing.M) { os.Exit(testenv.RunWithDatabase(m, "reconcile", &dbURL)) }

// testBundle is one test's ingest service, runner, tenant and Stripe
// source, whose API is a fake the test controls.
type testBundle struct {
	pool     *pgxpool.Pool
	store    tenancy.Store
	runner   *reconcile.Runner
	svc      *ingest.Service
	reg      *prometheus.Registry
	srv      *httptest.Server
	stripe   *stripetest.API
	sourceID string
	secret   string
}

func setup(t *testing.T) *testBundle {
	t.Helper()
	ctx := context.Background()
	pool, err := pg.Connect(ctx, dbURL, 8)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	key, _ := keyring.Generate()
	ring, _ := keyring.Parse(key)
	catalogue, err := schemas.Load()
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	svc := ingest.New(ingest.Config{Providers: kinds.Builtin()}, log, pool, ring, catalogue, prometheus.NewRegistry())
	testenv.Run(t, svc.Run)
	gin.SetMode(gin.ReleaseMode)
	engine := gin.New()
	svc.Register(engine)
	srv := httptest.NewServer(engine)
	t.Cleanup(srv.Close) // before the commits stop: requests wait on them
	b := &testBundle{pool: pool, store: tenancy.Store{Pool: pool, Ring: ring, Providers: kinds.Builtin()}, reg: prometheus.NewRegistry(), srv: srv,
		stripe: stripetest.New(t), secret: "whsec_" + testenv.RandomSuffix()}
	b.svc = svc
	// As a deployment running the built-in groups whose projections
	// reconciliation looks up.
	b.runner = reconcile.New(reconcile.Config{EffectGroups: []string{"verifications", "feedback", "installations"}}, log, b.store,
		kinds.Builtin(), svc, reconcile.NewMetrics(b.reg))
	tenant, err := b.store.CreateTenant(ctx, t.Name())
	if err != nil {
		t.Fatal(err)
	}
	b.sourceID, err = b.store.CreateSource(ctx, tenancy.NewSource{TenantID: tenant, Kind: "stripe", Account: "acct_" + testenv.RandomSuffix(), Secret: b.secret})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.store.SetAPICredentials(ctx, b.sourceID, fmt.Appendf(nil, `{"secret_key":"rk_test_123","api_base":%q}`, b.stripe.URL)); err != nil {
		t.Fatal(err)
	}
	return b
}

// loopRunner is a runner whose Loop ticks every interval, over the
// default 72h lookback: it reaches the events a test records.
func (b *testBundle) loopRunner(t *testing.T, every time.Duration) *reconcile.Runner {
	t.Helper()
	return reconcile.New(reconcile.Config{Every: every}, slog.New(slog.DiscardHandler), b.store, kinds.Builtin(), b.svc, reconcile.NewMetrics(prometheus.NewRegistry()))
}

func (b *testBundle) count(t *testing.T, query string, args ...any) int {
	t.Helper()
	var n int
	if err := b.pool.QueryRow(context.Background(), query, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// webhook delivers body to the source signed as Stripe signs.
func (b *testBundle) webhook(t *testing.T, body []byte) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, b.srv.URL+"/v1/ingest/"+b.sourceID, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Stripe-Signature", webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: body, Secret: b.secret, Timestamp: time.Now()}).Header)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func paidInvoices(n int, at time.Time) []stripetest.Event {
	s := testenv.RandomSuffix()
	evs := make([]stripetest.Event, n)
	for i := range evs {
		evs[i] = stripetest.Event{ID: fmt.Sprintf("evt_%s_%d", s, i), Type: "invoice.paid", Created: at, APIVersion: "2025-03-31.basil",
			Object: map[string]any{"id": fmt.Sprintf("in_%s_%d", s, i), "object": "invoice", "customer": "cus_" + s, "amount_paid": 1000, "currency": "usd", "status": "paid"}}
	}
	return evs
}

// Scenario: the endpoint was down while Stripe recorded paid invoices. One
// run enters each once through the inbox and the outbox, paging through the
// list and waiting out a 429; a second run changes nothing; the late
// webhooks (rendered with other delivery metadata, as Stripe's are) are
// duplicates, not conflicts.
func TestMissedInvoicesAreRecoveredOnceAndLateWebhooksAreDuplicates(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	since := time.Now().Add(-time.Hour)
	evs := paidInvoices(25, time.Now().Add(-10*time.Minute))
	b.stripe.Record(evs...)
	b.stripe.Record(stripetest.Event{ID: "evt_cust_" + testenv.RandomSuffix(), Type: "customer.created", Created: time.Now().Add(-5 * time.Minute),
		Object: map[string]any{"id": "cus_x", "object": "customer"}})
	b.stripe.Throttle(1)

	rep, err := b.runner.Source(ctx, b.sourceID, provider.Window{Since: since})
	if err != nil {
		t.Fatal(err)
	}
	if got := rep.Corrections[reconcile.OutcomeRecovered]; got != 25 {
		t.Fatalf("recovered = %d, want 25 (report %+v)", got, rep)
	}
	if n := b.count(t, `SELECT count(*) FROM inbox WHERE source_id = $1`, b.sourceID); n != 25 {
		t.Fatalf("inbox rows = %d, want 25 (a type the catalogue does not handle is not recovered)", n)
	}
	if n := b.count(t, `SELECT count(*) FROM outbox o JOIN inbox i ON i.id = o.inbox_id
		WHERE i.source_id = $1 AND o.headers->>'sluice_recovered' = 'true'`, b.sourceID); n != 25 {
		t.Fatalf("recovered outbox rows = %d, want 25", n)
	}
	if n := b.count(t, `SELECT corrected FROM reconcile_runs WHERE id = $1`, rep.RunID); n != 25 {
		t.Fatalf("run's corrected = %d, want 25", n)
	}
	if got := testutil.ToFloat64(b.metric("stripe", reconcile.OutcomeRecovered)); got != 25 {
		t.Fatalf("metric = %v, want 25", got)
	}

	again, err := b.runner.Source(ctx, b.sourceID, provider.Window{Since: since})
	if err != nil {
		t.Fatal(err)
	}
	// Only the handled types are asked for: the customer.created is not listed.
	if again.Corrected() != 0 || again.Found != 25 {
		t.Fatalf("second run: %+v, want 25 found and no correction", again)
	}

	for _, e := range evs {
		if status := b.webhook(t, e.Body(1)); status != http.StatusOK {
			t.Fatalf("late webhook %s: status %d, want 200 duplicate", e.ID, status)
		}
	}
	if n := b.count(t, `SELECT count(*) FROM inbox WHERE source_id = $1`, b.sourceID); n != 25 {
		t.Fatalf("inbox rows after late webhooks = %d, want 25", n)
	}
	if n := b.count(t, `SELECT count(*) FROM inbox_conflicts c JOIN inbox i ON i.id = c.inbox_id WHERE i.source_id = $1`, b.sourceID); n != 0 {
		t.Fatalf("conflicts = %d, want 0", n)
	}
	if n := b.count(t, `SELECT count(*) FROM outbox o JOIN inbox i ON i.id = o.inbox_id WHERE i.source_id = $1`, b.sourceID); n != 25 {
		t.Fatalf("outbox rows = %d, want 25", n)
	}
}

// A webhook that did arrive is not a correction: the run lists it and
// finds it a duplicate.
func TestDeliveredEventsAreNotCorrections(t *testing.T) {
	t.Parallel()
	b := setup(t)
	evs := paidInvoices(3, time.Now().Add(-time.Minute))
	b.stripe.Record(evs...)
	if status := b.webhook(t, evs[0].Body(1)); status != http.StatusAccepted {
		t.Fatalf("webhook: %d", status)
	}
	rep, err := b.runner.Source(context.Background(), b.sourceID, provider.Window{Since: time.Now().Add(-time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Found != 3 || rep.Corrections[reconcile.OutcomeRecovered] != 2 {
		t.Fatalf("report %+v, want 3 found and 2 recovered", rep)
	}
}

// An automatic run begins where the last window read to its end ended
// (less the overlap), so no window is skipped; a manual window elsewhere
// moves nothing.
func TestRunsResumeFromThePosition(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	first, err := b.runner.Source(ctx, b.sourceID, provider.Window{})
	if err != nil {
		t.Fatal(err)
	}
	manual, err := b.runner.Source(ctx, b.sourceID, provider.Window{Since: time.Now().Add(time.Hour - 24*time.Hour), Until: time.Now().Add(-time.Hour)})
	if err != nil || manual.Automatic {
		t.Fatal(err)
	}
	next, err := b.runner.Source(ctx, b.sourceID, provider.Window{})
	if err != nil {
		t.Fatal(err)
	}
	// Postgres keeps microseconds.
	if !next.Window.Since.Equal(first.Window.Until.Add(-10 * time.Minute).Truncate(time.Microsecond)) {
		t.Fatalf("second window %v does not resume from the first's end %v less the overlap", next.Window, first.Window.Until)
	}
	if ok, failed := runs(b.reg, "stripe", "ok"), runs(b.reg, "stripe", "failed"); ok != 3 || failed != 0 {
		t.Errorf("runs counted ok %v, failed %v; want 3, 0", ok, failed)
	}
}

// runs reads sluice_reconcile_runs_total for a kind and result.
func runs(reg *prometheus.Registry, kind, result string) float64 {
	return counter(reg, "sluice_reconcile_runs_total", map[string]string{"kind": kind, "result": result})
}

func (b *testBundle) metric(kind string, o reconcile.Outcome) prometheus.Collector {
	v := counter(b.reg, "sluice_reconcile_corrections_total", map[string]string{"kind": kind, "outcome": string(o)})
	return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "x"}, func() float64 { return v })
}

// counter reads the series of counter name whose labels are exactly labels.
func counter(reg *prometheus.Registry, name string, labels map[string]string) float64 {
	mfs, _ := reg.Gather()
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	series:
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if labels[l.GetName()] != l.GetValue() {
					continue series
				}
			}
			return m.GetCounter().GetValue()
		}
	}
	return 0
}

// counter reads the series of counter name in b.reg whose labels are
// labels; -1 when there is none.
func (b *testBundle) counter(t *testing.T, name string, labels map[string]string) float64 {
	return testenv.Metric(t, b.reg, name, labels)
}

// Credentials are checked by the kind's rules, sealed, and refused for a
// kind with no API.
func TestAPICredentialsAreCheckedAndSealed(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	if err := b.store.SetAPICredentials(ctx, b.sourceID, []byte(`{"secret_key":"pk_live_public"}`)); err == nil {
		t.Fatal("a publishable key was accepted as API credentials")
	}
	secret := "rk_live_" + testenv.RandomSuffix()
	if err := b.store.SetAPICredentials(ctx, b.sourceID, fmt.Appendf(nil, `{"secret_key":%q}`, secret)); err != nil {
		t.Fatal(err)
	}
	var sealed []byte
	if err := b.pool.QueryRow(ctx, `SELECT ciphertext FROM source_api_credentials WHERE source_id = $1`, b.sourceID).Scan(&sealed); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(sealed, []byte(secret)) {
		t.Fatal("credentials stored in the clear")
	}
	_, opened, err := b.store.APICredentials(ctx, b.sourceID)
	if err != nil || !bytes.Contains(opened, []byte(secret)) {
		t.Fatalf("credentials do not open: %v", err)
	}
	tenant, _ := b.store.CreateTenant(ctx, "hmac")
	hmacSource, err := b.store.CreateSource(ctx, tenancy.NewSource{TenantID: tenant, Kind: "hmac", Account: "a", Secret: "s",
		Settings: []byte(`{"header":"X-Sig","eventId":"/id","eventType":"/type"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.store.SetAPICredentials(ctx, hmacSource, []byte(`{}`)); err == nil {
		t.Fatal("credentials accepted for a kind with no API")
	}
	if err := b.store.ClearAPICredentials(ctx, b.sourceID); err != nil {
		t.Fatal(err)
	}
	if _, err := b.runner.Source(ctx, b.sourceID, provider.Window{}); err == nil {
		t.Fatal("a source without credentials was reconciled")
	}
}

// An on-call sees reconciliation fail on the runs metric: every kind's
// series exists from the start at zero (a first failure is an increase), a
// run the provider's API refuses counts as failed, a good one as ok.
func TestRunsAreCountedByResult(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	runs := func(result string) float64 {
		return b.counter(t, "sluice_reconcile_runs_total", map[string]string{"kind": "stripe", "result": result})
	}
	for _, result := range []string{"ok", "failed", "budget"} {
		if got := runs(result); got != 0 {
			t.Fatalf("before any run: %s = %v, want a series at 0", result, got)
		}
	}
	if _, err := b.runner.Source(ctx, b.sourceID, provider.Window{Since: time.Now().Add(-time.Hour)}); err != nil {
		t.Fatal(err)
	}
	refusing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, `{"error":{"type":"invalid_request_error","message":"Invalid API Key provided"}}`, http.StatusUnauthorized)
	}))
	t.Cleanup(refusing.Close)
	if err := b.store.SetAPICredentials(ctx, b.sourceID, fmt.Appendf(nil, `{"secret_key":"rk_test_123","api_base":%q}`, refusing.URL)); err != nil {
		t.Fatal(err)
	}
	if _, err := b.runner.Source(ctx, b.sourceID, provider.Window{Since: time.Now().Add(-time.Hour)}); err == nil {
		t.Fatal("a run against an API answering 401 succeeded")
	}
	if ok, failed := runs("ok"), runs("failed"); ok != 1 || failed != 1 {
		t.Errorf("runs ok = %v, failed = %v, want 1 and 1", ok, failed)
	}
}

// One instance at a time reconciles a source: while another holds the
// source's lock, a run is refused with ErrBusy and a round skips it.
func TestASourceIsReconciledByOneInstanceAtATime(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	conn, err := b.pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock(hashtext('sluice.reconcile'), hashtext($1))`, b.sourceID); err != nil {
		t.Fatal(err)
	}
	if _, err := b.runner.Source(ctx, b.sourceID, provider.Window{}); !errors.Is(err, reconcile.ErrBusy) {
		t.Fatalf("run while another instance holds the source: %v, want ErrBusy", err)
	}
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_unlock(hashtext('sluice.reconcile'), hashtext($1))`, b.sourceID); err != nil {
		t.Fatal(err)
	}
	if _, err := b.runner.Source(ctx, b.sourceID, provider.Window{}); err != nil {
		t.Fatalf("run once released: %v", err)
	}
}

// serve's loop reconciles every source with credentials on its own. Not
// parallel: the loop reaches every source of the database, and the other
// tests count their own runs' corrections. Sequential tests finish before
// parallel ones make their sources.
func TestLoopReconcilesPeriodically(t *testing.T) {
	b := setup(t)
	evs := paidInvoices(2, time.Now().Add(-time.Minute))
	b.stripe.Record(evs...)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.loopRunner(t, 50*time.Millisecond).Loop(ctx) }()
	testenv.Eventually(t, 30*time.Second, "the loop to recover both invoices", func() (bool, error) {
		return b.count(t, `SELECT count(*) FROM inbox WHERE source_id = $1`, b.sourceID) == 2, nil
	})
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// A dry run reports what a run would recover, enters nothing, and leaves
// the watermark where it was.
func TestDryRunReportsAndEntersNothing(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	// Older than the overlap a resumed run repeats: only a watermark left
	// alone brings them back.
	evs := paidInvoices(4, time.Now().Add(-30*time.Minute))
	b.stripe.Record(evs...)
	if status := b.webhook(t, evs[0].Body(1)); status != http.StatusAccepted {
		t.Fatalf("webhook: %d", status)
	}
	rep, err := b.runner.Source(ctx, b.sourceID, provider.Window{Since: time.Now().Add(-time.Hour), DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Corrections[reconcile.OutcomeRecovered] != 3 {
		t.Fatalf("dry run reports %+v, want 3 to recover", rep.Corrections)
	}
	if n := b.count(t, `SELECT count(*) FROM inbox WHERE source_id = $1`, b.sourceID); n != 1 {
		t.Fatalf("inbox rows after a dry run = %d, want 1", n)
	}
	if n := b.count(t, `SELECT count(*) FROM reconcile_corrections WHERE source_id = $1`, b.sourceID); n != 0 {
		t.Fatalf("a dry run recorded %d corrections", n)
	}
	next, err := b.runner.Source(ctx, b.sourceID, provider.Window{})
	if err != nil {
		t.Fatal(err)
	}
	if next.Corrections[reconcile.OutcomeRecovered] != 3 {
		t.Fatalf("the run after a dry run recovered %+v, want 3 (the dry run moved no watermark)", next.Corrections)
	}
}

// A source's API budget is shared by every instance: once a run spent it,
// the run stops with ErrBudget (its window is not passed), and another
// instance's run is refused before it sends anything.
func TestAPIBudgetIsSharedByInstances(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	b.stripe.Record(paidInvoices(350, time.Now().Add(-time.Minute))...) // 4 pages
	reg := prometheus.NewRegistry()
	m := reconcile.NewMetrics(reg)
	budget := func() *reconcile.Runner {
		return reconcile.New(reconcile.Config{Budget: 3}, slog.New(slog.DiscardHandler), b.store, kinds.Builtin(), b.svc, m)
	}
	if _, err := budget().Source(ctx, b.sourceID, provider.Window{Since: time.Now().Add(-time.Hour)}); !errors.Is(err, reconcile.ErrBudget) {
		t.Fatalf("run past its budget: %v, want ErrBudget", err)
	}
	if n := b.stripe.Requests(); n != 3 {
		t.Fatalf("Stripe got %d requests, want the budget's 3", n)
	}
	if _, err := budget().Source(ctx, b.sourceID, provider.Window{Since: time.Now().Add(-time.Hour)}); !errors.Is(err, reconcile.ErrBudget) {
		t.Fatalf("another instance's run: %v, want ErrBudget", err)
	}
	if n := b.stripe.Requests(); n != 3 {
		t.Fatalf("Stripe got %d requests after another instance's run, want still 3", n)
	}
	if n := b.count(t, `SELECT count(*) FROM reconcile_runs WHERE source_id = $1 AND error <> ''`, b.sourceID); n != 2 {
		t.Fatalf("failed runs recorded = %d, want 2", n)
	}
	if spent := runs(reg, "stripe", "budget"); spent != 2 {
		t.Errorf("runs stopped by the budget counted %v, want 2", spent)
	}
}
