package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/sluicehq/sluice/command/internal/operator/admintoken"
	"github.com/sluicehq/sluice/internal/ingest/reconcile"
	"github.com/sluicehq/sluice/internal/provider/kinds/stripe/stripetest"
	"github.com/sluicehq/sluice/internal/testenv"
)

// outageOf is what Stripe recorded for the fixture's account while the
// endpoint was down: n events over the last hour, one in ten a paid invoice
// of the fixture's customer.
func (f tenantFixture) outageOf(n int) ([]stripetest.Event, int) {
	return stripetest.Outage(n, f.customer, time.Now().Add(-time.Hour), 30*time.Minute)
}

// waitGranted waits for the consumers to grant every invoice, then checks
// that each was granted once and the balance is exact.
func (f tenantFixture) waitGranted(t *testing.T, invoices int) {
	t.Helper()
	testenv.Eventually(t, 2*time.Minute, "every recovered invoice granted", func() (bool, error) {
		return f.grants(t) >= invoices, nil
	})
	if n := f.grants(t); n != invoices {
		t.Fatalf("grants = %d, want %d", n, invoices)
	}
	if b := f.balance(t); b != int64(100*invoices) {
		t.Fatalf("balance = %d, want %d", b, 100*invoices)
	}
}

// Issue 34, invariant 10 at volume: an outage of 20,000 Stripe events, 2,000
// of them paid invoices. Reconciliation with a budget of 20 requests an hour
// reads what each hour allows and resumes where it stopped; runs converge
// to each invoice granted once and the balance exact, with no event entered
// twice and no page asked for twice.
func TestReconcileConvergesOnALargeOutageWithinAnHourlyBudget(t *testing.T) {
	t.Parallel()
	f := newTenant(t)
	ctx := context.Background()
	g := commandGlobals()
	api := f.withStripeAPI(t, g)
	evs, invoices := f.outageOf(20_000)
	api.Record(evs...)

	const budget = 8 // 20 pages of handled events: three hours
	run := &ReconcileRunCmd{Source: f.sourceID, ReconcileFlags: ReconcileFlags{ReconcileBudget: budget}}
	var runs int
	for runs = 1; ; runs++ {
		if runs > 5 {
			t.Fatalf("%d runs and the outage is not recovered", runs)
		}
		err := run.Run(ctx, g, slog.New(slog.DiscardHandler))
		if err == nil {
			break
		}
		// The next clock hour, for this source's budget.
		if _, err := suite.pool.Exec(ctx, `UPDATE reconcile_budgets SET hour = hour - interval '1 hour' WHERE source_id = $1`, f.sourceID); err != nil {
			t.Fatal(err)
		}
	}
	// A clock hour that turns during the test refills the budget early: one
	// run fewer, never more.
	if runs > 3 || runs < 2 {
		t.Errorf("converged in %d runs, want 3 at %d requests an hour (or 2 across an hour's turn)", runs, budget)
	}
	if n := f.inboxRows(t); n != invoices {
		t.Fatalf("inbox rows = %d, want %d", n, invoices)
	}
	if got, most := api.Requests("/v1/events"), invoices/100+1; got > most {
		t.Fatalf("listing requests = %d, want at most %d", got, most)
	}
	f.waitGranted(t, invoices)
}

// Issue 34: a reconciling process killed (-9) in the middle of a large
// window loses nothing and repeats nothing: the next run resumes from the
// last page it saved, reading at most one page again, and every invoice is
// granted once.
func TestReconcileKilledMidWindowResumesFromItsLastPage(t *testing.T) {
	t.Parallel()
	f := newTenant(t)
	ctx := context.Background()
	g := commandGlobals()
	api := f.withStripeAPI(t, g)
	evs, invoices := f.outageOf(20_000)
	api.Record(evs...)
	api.SlowDown(150 * time.Millisecond)

	cmd := exec.Command(sluiceBinary(t), "reconcile", "--source", f.sourceID)
	cmd.Env = append(sluiceEnv(suite.topics), "SLUICE_SECRET_KEY="+suite.secretKey)
	out := &bytes.Buffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, time.Minute, "the reconciling process to save its fifth page", func() (bool, error) {
		return count(t, `SELECT count(*) FROM reconcile_runs WHERE source_id = $1 AND pages >= 5`, f.sourceID) == 1, nil
	})
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	entered := f.inboxRows(t)
	if entered == 0 || entered >= invoices {
		t.Fatalf("%d of %d entered before the kill, want it stopped in the middle\n%s", entered, invoices, out)
	}
	before := api.Requests("/v1/events")
	api.SlowDown(0)

	run := &ReconcileRunCmd{Source: f.sourceID}
	if err := run.Run(ctx, g, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	runs, err := reconcile.Runs(ctx, suite.pool, f.sourceID, 10)
	if err != nil || len(runs) != 2 {
		t.Fatalf("runs %+v, %v; want the killed one and the one after", runs, err)
	}
	if runs[1].Outcome != reconcile.OutcomeAbandoned || runs[0].Outcome != reconcile.OutcomeOK {
		t.Fatalf("outcomes %s then %s, want abandoned then ok", runs[1].Outcome, runs[0].Outcome)
	}
	// What the killed run saved is not asked for again: at most the page in
	// flight when it died.
	pagesLeft := invoices/100 - runs[1].Pages
	if got := api.Requests("/v1/events") - before; got > pagesLeft+2 {
		t.Fatalf("the resumed run asked for %d pages, want at most %d (the %d left and the one in flight)", got, pagesLeft+2, pagesLeft)
	}
	if n := f.inboxRows(t); n != invoices {
		t.Fatalf("inbox rows = %d, want %d", n, invoices)
	}
	f.waitGranted(t, invoices)
}

// Issue 34: a restricted key with read access to events but not to invoice
// payments. Stripe answers the lookup that would release a waiting refund
// 403, naming the permission: the run is partial and says which permission
// is missing (run row, status, metric); the events it listed are entered
// and the position moves past the window; the refund stays waiting, and
// counted.
func TestReconcileWithoutTheInvoicePaymentsPermissionIsPartial(t *testing.T) {
	t.Parallel()
	f := newTenant(t)
	ctx := context.Background()
	g := commandGlobals()
	api := f.withStripeAPI(t, g)
	api.ForbidInvoicePayments()
	s := testenv.RandomSuffix()
	inv, pi := "in_p"+s, "pi_p"+s
	paid, refund := "evt_paid_p"+s, "evt_refund_p"+s
	for _, step := range []struct{ name, id string }{{"invoice.paid", paid}, {"charge.refunded", refund}} {
		if code := f.sendSigned(t, f.stripeExample(t, step.name, step.id, inv, pi)); code != 202 {
			t.Fatalf("%s: status %d", step.name, code)
		}
	}
	missed, invoices := f.outageOf(50)
	api.Record(missed...)

	run := &ReconcileRunCmd{Source: f.sourceID}
	if err := run.Run(ctx, g, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatalf("a partial run is not a failure: %v", err)
	}
	runs, err := reconcile.Runs(ctx, suite.pool, f.sourceID, 1)
	if err != nil || len(runs) != 1 {
		t.Fatal(runs, err)
	}
	if r := runs[0]; r.Outcome != reconcile.OutcomePartial || r.Missing != "rak_invoice_read" || r.Corrected != invoices {
		t.Fatalf("run %+v, want partial, missing rak_invoice_read, %d entered", r, invoices)
	}
	st, err := reconcile.Sources(ctx, suite.pool, f.sourceID)
	if err != nil || len(st) != 1 {
		t.Fatal(st, err)
	}
	if st[0].Waiting != 1 || st[0].Missing != "rak_invoice_read" || st[0].Since != nil || st[0].CoveredUntil == nil {
		t.Fatalf("status %+v, want one waiting, the permission named, the window covered", st[0])
	}
	if n := count(t, `SELECT count(*) FROM inbox WHERE source_id = $1 AND event_id LIKE $2 AND status = 'waiting'`, f.sourceID, refund+"%"); n != 1 {
		t.Fatalf("refund: %d waiting rows, want still 1", n)
	}
	f.waitGranted(t, invoices+1)
}

// The admin API of a running pipeline reconciles by request through the
// same runner settings as the schedule, and the grants follow: a
// tenant-scoped operate token runs its source's automatic window, and the
// run is in that source's standing.
func TestReconcileByAdminRequestGrantsTheMissedInvoices(t *testing.T) {
	t.Parallel()
	f := newTenant(t)
	g := commandGlobals()
	api := f.withStripeAPI(t, g)
	evs, invoices := f.outageOf(300)
	api.Record(evs...)
	token := adminToken(t, admintoken.RoleOperate, f.tenantID)

	code, body := adminCall(t, token, http.MethodPost, "/admin/v1/sources/"+f.sourceID+"/reconcile", map[string]any{})
	if code != http.StatusOK {
		t.Fatalf("POST reconcile: %d %s", code, body)
	}
	var rep struct {
		Outcome   string `json:"outcome"`
		Corrected int    `json:"corrected"`
	}
	if err := json.Unmarshal(body, &rep); err != nil || rep.Outcome != "ok" || rep.Corrected != invoices {
		t.Fatalf("report %s (%v), want ok with %d corrected", body, err, invoices)
	}
	f.waitGranted(t, invoices)
	code, body = adminCall(t, token, http.MethodGet, "/admin/v1/sources/"+f.sourceID+"/reconcile", nil)
	if code != http.StatusOK || !bytes.Contains(body, []byte(`"outcome":"ok"`)) {
		t.Fatalf("GET reconcile: %d %s", code, body)
	}
}
