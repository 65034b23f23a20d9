package admin_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/command/internal/operator/admintoken"
	"github.com/sluicehq/sluice/internal/provider/kinds/stripe/stripetest"
	"github.com/sluicehq/sluice/internal/store/tenancy"
	"github.com/sluicehq/sluice/internal/testenv"
)

// report is the part of a run's report the tests read.
type report struct {
	RunID       int64          `json:"run_id"`
	SourceID    string         `json:"source_id"`
	Until       time.Time      `json:"until"`
	DryRun      bool           `json:"dry_run"`
	Automatic   bool           `json:"automatic"`
	Clamped     bool           `json:"clamped"`
	Outcome     string         `json:"outcome"`
	Found       int            `json:"found"`
	Corrections map[string]int `json:"corrections"`
}

type run struct {
	ID        int64  `json:"id"`
	SourceID  string `json:"source_id"`
	Outcome   string `json:"outcome"`
	Corrected int    `json:"corrected"`
	Error     string `json:"error"`
}

type sourceReconciliation struct {
	Status *struct {
		SourceID string `json:"source_id"`
	} `json:"status"`
	Runs []run `json:"runs"`
}

// wantAudit checks that tokenID's audit rows are want, in order.
func (b *bundle) wantAudit(t *testing.T, tokenID string, want ...auditRow) {
	t.Helper()
	if rows := b.auditRows(t, tokenID); !slices.Equal(rows, want) {
		t.Errorf("audit rows %+v, want %+v", rows, want)
	}
}

func reconcilePath(source string) string { return "/admin/v1/sources/" + source + "/reconcile" }

// runIDs lists the ids of the runs GET path lists.
func (b *bundle) runIDs(t *testing.T, token, path string) []int64 {
	t.Helper()
	status, got := b.do(t, token, http.MethodGet, path, nil)
	if status != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, status, got)
	}
	var ids []int64
	for _, r := range decode[struct{ Items []run }](t, got).Items {
		ids = append(ids, r.ID)
	}
	return ids
}

// dryRun reconciles source's automatic window as a dry run and returns
// the run's id.
func (b *bundle) dryRun(t *testing.T, token, source string) int64 {
	t.Helper()
	status, got := b.do(t, token, http.MethodPost, reconcilePath(source), map[string]any{"dry_run": true})
	if status != http.StatusOK {
		t.Fatalf("dry run of %s: %d %s", source, status, got)
	}
	return decode[report](t, got).RunID
}

func paidInvoice(at time.Time) stripetest.Event {
	s := testenv.RandomSuffix()
	return stripetest.Event{ID: "evt_" + s, Type: "invoice.paid", Created: at, APIVersion: "2025-03-31.basil",
		Object: map[string]any{"id": "in_" + s, "object": "invoice", "customer": "cus_" + s, "amount_paid": 1000, "currency": "usd", "status": "paid"}}
}

// Scenario: an operator reconciles the last hour of a Stripe source from
// the console, asking up to an hour from now. The window is cut at now,
// the invoice the webhooks missed enters through the inbox, the report
// says so, the run's row is what the source's page and the runs list
// show, and the action is audited.
func TestReconcileByRequestReportsTheRunAndListsIt(t *testing.T) {
	t.Parallel()
	b := setup(t)
	w := b.newWorld(t)
	w.stripe.Record(paidInvoice(time.Now().Add(-10 * time.Minute)))
	rec, tok := b.tokenRecord(t, admintoken.RoleOperate, "")

	status, got := b.do(t, tok, http.MethodPost, reconcilePath(w.apiSource),
		map[string]any{"since": time.Now().Add(-time.Hour), "until": time.Now().Add(time.Hour)})
	rep := decode[report](t, got)
	if status != http.StatusOK || !rep.Clamped || rep.Until.After(time.Now()) || rep.Outcome != "ok" || rep.Automatic || rep.DryRun ||
		rep.SourceID != w.apiSource || rep.Found != 1 || rep.Corrections["recovered"] != 1 || rep.RunID == 0 {
		t.Fatalf("run: %d %s, want 200, clamped at now, ok, one invoice recovered", status, got)
	}
	if n := b.count(t, `SELECT count(*) FROM inbox WHERE source_id = $1`, w.apiSource); n != 1 {
		t.Errorf("inbox rows of the source: %d, want the recovered invoice", n)
	}

	read := b.token(t, admintoken.RoleRead, w.tenant)
	status, got = b.do(t, read, http.MethodGet, reconcilePath(w.apiSource), nil)
	page := decode[sourceReconciliation](t, got)
	if status != http.StatusOK || page.Status == nil || page.Status.SourceID != w.apiSource || len(page.Runs) != 1 ||
		page.Runs[0].ID != rep.RunID || page.Runs[0].Outcome != "ok" || page.Runs[0].Corrected != 1 {
		t.Errorf("source's reconciliation: %d %s, want its status and run %d", status, got, rep.RunID)
	}
	if ids := b.runIDs(t, read, "/admin/v1/reconcile/runs?source_id="+w.apiSource); !slices.Equal(ids, []int64{rep.RunID}) {
		t.Errorf("runs of the source: %v, want [%d]", ids, rep.RunID)
	}
	if ids := b.runIDs(t, read, "/admin/v1/reconcile/runs"); !slices.Contains(ids, rep.RunID) {
		t.Errorf("the tenant's runs: %v, want %d among them", ids, rep.RunID)
	}

	status, got = b.do(t, tok, http.MethodPost, reconcilePath(w.apiSource), map[string]any{"dry_run": true})
	if dry := decode[report](t, got); status != http.StatusOK || !dry.DryRun || !dry.Automatic {
		t.Errorf("dry run of the automatic window: %d %s", status, got)
	}
	b.wantAudit(t, rec.ID,
		auditRow{rec.ID, "source.reconcile", "source", w.apiSource, w.tenant, "ok"},
		auditRow{rec.ID, "source.reconcile_dry_run", "source", w.apiSource, w.tenant, "ok"})
}

// A tenant-scoped token reaches its own tenant's reconciliation only:
// another tenant's source is 404 on every route (and a run there never
// begins), and the runs list holds its own sources' runs, newest first
// across them.
func TestReconcileRoutesConfineScopedTokens(t *testing.T) {
	t.Parallel()
	b := setup(t)
	a, other := b.newWorld(t), b.newWorld(t)
	secondA, _ := b.newStripeSource(t, a.tenant)
	root := b.token(t, admintoken.RoleOperate, "")
	runA := b.dryRun(t, root, a.apiSource)
	runOther := b.dryRun(t, root, other.apiSource)
	runSecondA := b.dryRun(t, root, secondA)
	if ids := b.runIDs(t, root, "/admin/v1/reconcile/runs?tenant_id="+other.tenant); !slices.Equal(ids, []int64{runOther}) {
		t.Fatalf("the other tenant's runs, unscoped: %v, want [%d]", ids, runOther)
	}

	readA, operateA := b.token(t, admintoken.RoleRead, a.tenant), b.token(t, admintoken.RoleOperate, a.tenant)
	for _, c := range []struct {
		token, method, path string
		body                any
	}{
		{readA, http.MethodGet, reconcilePath(other.apiSource), nil},
		{readA, http.MethodGet, "/admin/v1/reconcile/runs?source_id=" + other.apiSource, nil},
		{readA, http.MethodGet, "/admin/v1/reconcile/runs?tenant_id=" + other.tenant, nil},
		{operateA, http.MethodPost, reconcilePath(other.apiSource), map[string]any{}},
	} {
		if status, got := b.do(t, c.token, c.method, c.path, c.body); status != http.StatusNotFound {
			t.Errorf("scoped token: %s %s: %d %s, want 404", c.method, c.path, status, got)
		}
	}
	if n := b.count(t, `SELECT count(*) FROM reconcile_runs WHERE source_id = $1`, other.apiSource); n != 1 {
		t.Errorf("runs of the other tenant's source: %d, want only the unscoped one", n)
	}
	if ids := b.runIDs(t, readA, "/admin/v1/reconcile/runs"); !slices.Equal(ids, []int64{runSecondA, runA}) {
		t.Errorf("scoped runs list: %v, want its tenant's [%d %d], newest first", ids, runSecondA, runA)
	}
	if ids := b.runIDs(t, readA, "/admin/v1/reconcile/runs?limit=1"); !slices.Equal(ids, []int64{runSecondA}) {
		t.Errorf("scoped runs list, limit 1: %v, want [%d]", ids, runSecondA)
	}
}

// Acting needs role operate: a read token's run is 403, audited as
// refused, and never begins.
func TestReconcileByRequestNeedsAnOperateToken(t *testing.T) {
	t.Parallel()
	b := setup(t)
	w := b.newWorld(t)
	rec, read := b.tokenRecord(t, admintoken.RoleRead, "")
	if status, got := b.do(t, read, http.MethodPost, reconcilePath(w.apiSource), map[string]any{}); status != http.StatusForbidden {
		t.Errorf("read token's run: %d %s, want 403", status, got)
	}
	b.wantAudit(t, rec.ID, auditRow{rec.ID, "source.reconcile", "source", w.apiSource, "", "forbidden"})
	if n := b.count(t, `SELECT count(*) FROM reconcile_runs WHERE source_id = $1`, w.apiSource); n != 0 {
		t.Errorf("runs: %d, want none", n)
	}
}

// What cannot run is a problem naming why, never a 500: a window that
// ends where (or before) it begins, times or fields that are not the
// body's, a kind with no provider API, a source without credentials, a
// source that does not exist. Nothing enters the inbox.
func TestReconcileByRequestRefusesWhatCannotRun(t *testing.T) {
	t.Parallel()
	b := setup(t)
	w := b.newWorld(t)
	w.stripe.Record(paidInvoice(time.Now().Add(-10 * time.Minute)))
	ctx := context.Background()
	noCredentials, _ := b.newStripeSource(t, w.tenant)
	if err := b.store.ClearAPICredentials(ctx, noCredentials); err != nil {
		t.Fatal(err)
	}
	noAPI, err := b.store.CreateSource(ctx, tenancy.NewSource{TenantID: w.tenant, Kind: "hmac", Account: "shop-" + testenv.RandomSuffix(), Secret: "s",
		Settings: []byte(`{"header":"X-Sig","eventId":"/id","eventType":"/type"}`)})
	if err != nil {
		t.Fatal(err)
	}
	tok := b.token(t, admintoken.RoleOperate, "")
	at := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	later := time.Now().Add(-time.Minute).UTC().Format(time.RFC3339)
	for _, c := range []struct {
		name, source string
		body         any
		status       int
		detail       string
	}{
		{"empty window", w.apiSource, map[string]any{"since": at, "until": at}, 422, "is not before until"},
		{"window ending before it begins", w.apiSource, map[string]any{"since": later, "until": at}, 422, "is not before until"},
		{"since no time", w.apiSource, `{"since":"yesterday"}`, 422, "date-time"},
		{"unknown field", w.apiSource, `{"dryrun":true}`, 422, "dryrun"},
		{"dry_run no boolean", w.apiSource, `{"dry_run":"yes"}`, 422, "boolean"},
		{"kind without API", noAPI, map[string]any{}, 422, "a hmac source has no provider API to reconcile against"},
		{"no credentials", noCredentials, map[string]any{}, 422, "source " + noCredentials + " has no API credentials"},
		{"unknown source", "5b2e1d4c-0000-4000-8000-000000000000", map[string]any{}, 404, "no source 5b2e1d4c-0000-4000-8000-000000000000"},
		{"not an id", "not-an-id", map[string]any{}, 422, "uuid"},
	} {
		if status, got := b.do(t, tok, http.MethodPost, reconcilePath(c.source), c.body); status != c.status || !strings.Contains(string(got), c.detail) {
			t.Errorf("%s: %d %s, want %d naming %q", c.name, status, got, c.status, c.detail)
		}
	}
	if n := b.count(t, `SELECT count(*) FROM inbox WHERE source_id = $1`, w.apiSource); n != 0 {
		t.Errorf("inbox rows: %d, want none", n)
	}
	// A refused run is a row: the source's page shows why.
	status, got := b.do(t, tok, http.MethodGet, reconcilePath(w.apiSource), nil)
	page := decode[sourceReconciliation](t, got)
	if status != http.StatusOK || len(page.Runs) != 2 || page.Runs[0].Outcome != "refused" || !strings.Contains(page.Runs[0].Error, "is not before until") {
		t.Errorf("source's runs after refusals: %d %s, want the two refused windows", status, got)
	}
	if status, got := b.do(t, tok, http.MethodGet, reconcilePath(noCredentials), nil); status != http.StatusOK || decode[sourceReconciliation](t, got).Status != nil {
		t.Errorf("a source without credentials: %d %s, want no status", status, got)
	}
}

// While another instance reconciles the source (its lock held), a run by
// request is 409 and does nothing; once that run ended, it runs.
func TestReconcileByRequestWhileAnotherRunsIsConflict(t *testing.T) {
	t.Parallel()
	b := setup(t)
	w := b.newWorld(t)
	ctx := context.Background()
	conn, err := b.pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock(hashtext('sluice.reconcile'), hashtext($1))`, w.apiSource); err != nil {
		t.Fatal(err)
	}
	rec, tok := b.tokenRecord(t, admintoken.RoleOperate, "")
	if status, got := b.do(t, tok, http.MethodPost, reconcilePath(w.apiSource), map[string]any{}); status != http.StatusConflict ||
		!strings.Contains(string(got), "is being reconciled now") {
		t.Errorf("run while another holds the source: %d %s, want 409", status, got)
	}
	if n := b.count(t, `SELECT count(*) FROM reconcile_runs WHERE source_id = $1`, w.apiSource); n != 0 {
		t.Errorf("runs: %d, want none (the other instance's is its own)", n)
	}
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_unlock(hashtext('sluice.reconcile'), hashtext($1))`, w.apiSource); err != nil {
		t.Fatal(err)
	}
	if status, got := b.do(t, tok, http.MethodPost, reconcilePath(w.apiSource), map[string]any{}); status != http.StatusOK {
		t.Errorf("run once released: %d %s", status, got)
	}
	b.wantAudit(t, rec.ID,
		auditRow{rec.ID, "source.reconcile", "source", w.apiSource, "", "conflict"},
		auditRow{rec.ID, "source.reconcile", "source", w.apiSource, w.tenant, "ok"})
}

// A run that finds the source's hourly API budget spent is no error: it
// answers its report, outcome budget, and the run's row says the same.
func TestReconcileByRequestOverBudgetReportsBudget(t *testing.T) {
	t.Parallel()
	b := setup(t)
	w := b.newWorld(t)
	w.stripe.Record(paidInvoice(time.Now().Add(-10 * time.Minute)))
	// The runner's budget (the default, 1000) spent this hour.
	if _, err := b.pool.Exec(context.Background(), `INSERT INTO reconcile_budgets (source_id, hour, used, budget)
VALUES ($1, date_trunc('hour', now()), 1000, 1000)`, w.apiSource); err != nil {
		t.Fatal(err)
	}
	tok := b.token(t, admintoken.RoleOperate, "")
	status, got := b.do(t, tok, http.MethodPost, reconcilePath(w.apiSource), map[string]any{})
	rep := decode[report](t, got)
	if status != http.StatusOK || rep.Outcome != "budget" || rep.Found != 0 {
		t.Fatalf("run over budget: %d %s, want 200, outcome budget", status, got)
	}
	status, got = b.do(t, tok, http.MethodGet, reconcilePath(w.apiSource), nil)
	if page := decode[sourceReconciliation](t, got); status != http.StatusOK || len(page.Runs) != 1 || page.Runs[0].ID != rep.RunID || page.Runs[0].Outcome != "budget" {
		t.Errorf("source's runs: %d %s, want run %d, outcome budget", status, got, rep.RunID)
	}
}

// A listener whose process does not ingest has no runner: a run by request
// is 503 saying so, and the runs are still read.
func TestReconcileByRequestNeedsAnIngestingProcess(t *testing.T) {
	t.Parallel()
	b := setupWith(t, process{kafka: adm})
	w := b.newWorld(t)
	tok := b.token(t, admintoken.RoleOperate, "")
	if status, got := b.do(t, tok, http.MethodPost, reconcilePath(w.apiSource), map[string]any{}); status != http.StatusServiceUnavailable ||
		!strings.Contains(string(got), "reconciliation is not available on this listener") {
		t.Errorf("run without a runner: %d %s, want 503", status, got)
	}
	if status, got := b.do(t, tok, http.MethodGet, reconcilePath(w.apiSource), nil); status != http.StatusOK {
		t.Errorf("source's reconciliation without a runner: %d %s", status, got)
	}
}

// A run the provider fails (a key it no longer accepts) is 502 naming the
// run, whose row says why; the problem never quotes the provider.
func TestReconcileByRequestWhoseProviderFailsIsBadGateway(t *testing.T) {
	t.Parallel()
	b := setup(t)
	w := b.newWorld(t)
	refusing := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, _ *http.Request) {
		rw.Header().Set("Content-Type", "application/json")
		rw.WriteHeader(http.StatusUnauthorized)
		_, _ = rw.Write([]byte(`{"error":{"type":"invalid_request_error","message":"Invalid API Key provided: rk_test_x"}}`))
	}))
	t.Cleanup(refusing.Close)
	if err := b.store.SetAPICredentials(context.Background(), w.apiSource, fmt.Appendf(nil, `{"secret_key":"rk_test_x","api_base":%q}`, refusing.URL)); err != nil {
		t.Fatal(err)
	}
	tok := b.token(t, admintoken.RoleOperate, "")
	status, problem := b.do(t, tok, http.MethodPost, reconcilePath(w.apiSource), map[string]any{})
	_, got := b.do(t, tok, http.MethodGet, reconcilePath(w.apiSource), nil)
	page := decode[sourceReconciliation](t, got)
	if len(page.Runs) != 1 || page.Runs[0].Outcome != "failed" || page.Runs[0].Error == "" {
		t.Fatalf("source's runs: %s, want the failed run with its error", got)
	}
	if status != http.StatusBadGateway || !strings.Contains(string(problem), fmt.Sprintf("reconcile run %d of source %s failed", page.Runs[0].ID, w.apiSource)) ||
		strings.Contains(string(problem), "Invalid API Key") {
		t.Errorf("run the provider fails: %d %s, want 502 naming run %d", status, problem, page.Runs[0].ID)
	}
}
