package reconcile_test

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluicehq/sluice/internal/ingest/reconcile"
	"github.com/sluicehq/sluice/internal/provider"
	"github.com/sluicehq/sluice/internal/provider/kinds"
	"github.com/sluicehq/sluice/internal/provider/kinds/stripe/stripetest"
	"github.com/sluicehq/sluice/internal/testenv"
)

// outage is what Stripe recorded while the endpoint was down: n events
// over the last hour, one in ten a paid invoice (handled), the rest of types
// no handler knows.
func outage(n int) ([]stripetest.Event, int) {
	return stripetest.Outage(n, "cus_"+testenv.RandomSuffix(), time.Now().Add(-time.Hour), 30*time.Minute)
}

func (b *testBundle) runnerWith(cfg reconcile.Config) (*reconcile.Runner, *prometheus.Registry) {
	reg := prometheus.NewRegistry()
	return reconcile.New(cfg, slog.New(slog.DiscardHandler), b.store, kinds.Builtin(), b.svc, reconcile.NewMetrics(reg)), reg
}

// Issue 34: a window of 20,000 events, 2,000 of a handled type, is read in
// one run with a budget of 1,000 requests an hour: only the handled types
// are asked for, 100 to a page, and each page is entered before the next is
// asked for. Every handled event enters once; the window is covered.
func TestALargeWindowIsRecoveredInOneRunAskingOnlyForHandledTypes(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	evs, handled := outage(20_000)
	b.stripe.Record(evs...)
	runner, _ := b.runnerWith(reconcile.Config{Budget: 1000})

	rep, err := runner.Source(ctx, b.sourceID, provider.Window{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Outcome != reconcile.OutcomeOK || rep.Corrections[reconcile.OutcomeRecovered] != handled {
		t.Fatalf("run %s recovered %d, want ok and %d", rep.Outcome, rep.Corrections[reconcile.OutcomeRecovered], handled)
	}
	if n := b.count(t, `SELECT count(*) FROM inbox WHERE source_id = $1`, b.sourceID); n != handled {
		t.Fatalf("inbox rows = %d, want %d", n, handled)
	}
	if n := b.count(t, `SELECT count(*) FROM outbox o JOIN inbox i ON i.id = o.inbox_id WHERE i.source_id = $1`, b.sourceID); n != handled {
		t.Fatalf("outbox rows = %d, want %d", n, handled)
	}
	// handled/100 pages, and a few more: nothing of the 18,000 others.
	if got, most := b.stripe.Requests("/v1/events"), handled/100+3; got > most {
		t.Fatalf("listing requests = %d, want at most %d", got, most)
	}
	if n := b.count(t, `SELECT count(*) FROM reconcile_positions WHERE source_id = $1 AND since IS NULL AND covered_until = $2`,
		b.sourceID, rep.Window.Until); n != 1 {
		t.Fatal("the window read to its end did not move the source's position to its end")
	}
}

// Issue 34: a window larger than an hour's budget progresses every hour and
// converges: each run reads what its budget allows, saving its position
// page by page; the next resumes there (reading no page twice), and the
// position moves past the window only once it is read to its end.
func TestAWindowLargerThanTheBudgetConvergesOverHours(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	evs, handled := outage(20_000)
	b.stripe.Record(evs...)
	const budget = 8
	runner, reg := b.runnerWith(reconcile.Config{Budget: budget})

	var runs, recovered int
	for {
		runs++
		if runs > 10 {
			t.Fatalf("%d runs and the window is not read to its end", runs)
		}
		rep, err := runner.Source(ctx, b.sourceID, provider.Window{})
		recovered += rep.Corrections[reconcile.OutcomeRecovered]
		if n := b.count(t, `SELECT count(*) FROM inbox WHERE source_id = $1`, b.sourceID); n != recovered {
			t.Fatalf("run %d: inbox rows %d, recovered so far %d: an event entered twice or not counted", runs, n, recovered)
		}
		if err == nil {
			break
		}
		if !errors.Is(err, reconcile.ErrBudget) || rep.Outcome != reconcile.OutcomeBudget {
			t.Fatalf("run %d: %v (%s), want it stopped by the budget", runs, err, rep.Outcome)
		}
		if runs > 1 && !rep.Resumed {
			t.Fatalf("run %d began a new window instead of resuming", runs)
		}
		if n := b.count(t, `SELECT count(*) FROM reconcile_positions WHERE source_id = $1 AND since IS NOT NULL`, b.sourceID); n != 1 {
			t.Fatal("a window not read to its end no longer in progress")
		}
		// The next clock hour, for this source's budget.
		if _, err := b.pool.Exec(ctx, `UPDATE reconcile_budgets SET hour = hour - interval '1 hour' WHERE source_id = $1`, b.sourceID); err != nil {
			t.Fatal(err)
		}
	}
	if recovered != handled {
		t.Fatalf("recovered %d over %d runs, want %d", recovered, runs, handled)
	}
	// A clock hour that turns during the test refills the budget early: one
	// run fewer, never more.
	if want := handled/100/budget + 1; runs > want || runs < want-1 {
		t.Errorf("took %d runs, want %d (or one fewer across an hour's turn)", runs, want)
	}
	// Each page once: a resumed listing asks for the page after the last one
	// saved, never for one again.
	if got, most := b.stripe.Requests("/v1/events"), handled/100+1; got > most {
		t.Fatalf("listing requests = %d over %d runs, want at most %d", got, runs, most)
	}
	if spent := runsOf(reg, "budget"); spent != float64(runs-1) {
		t.Errorf("runs stopped by the budget counted %v, want %d", spent, runs-1)
	}
}

func runsOf(reg *prometheus.Registry, result string) float64 { return runs(reg, "stripe", result) }

// Issue 34: throttling never ends a run while its deadline allows: twenty
// 429s in a row in the middle of a listing are waited out (Retry-After as
// the least wait), counted, and do not spend the source's budget.
func TestTwentyThrottledAnswersInARowDoNotEndTheRun(t *testing.T) {
	t.Parallel()
	b := setup(t)
	evs := paidInvoices(450, time.Now().Add(-10*time.Minute)) // 5 pages
	b.stripe.Record(evs...)
	b.stripe.ThrottleAfter(2, 20)
	runner, reg := b.runnerWith(reconcile.Config{Budget: 10, MaxBackoff: time.Second})

	rep, err := runner.Source(context.Background(), b.sourceID, provider.Window{})
	if err != nil {
		t.Fatalf("run: %v (%s)", err, rep.Outcome)
	}
	if rep.Corrections[reconcile.OutcomeRecovered] != 450 || rep.Requests != 25 {
		t.Fatalf("recovered %d in %d requests, want 450 in 25 (5 pages, 20 throttled)", rep.Corrections[reconcile.OutcomeRecovered], rep.Requests)
	}
	if got := testenv.Metric(t, reg, "sluice_reconcile_throttled_total", map[string]string{"kind": "stripe"}); got != 20 {
		t.Fatalf("throttled answers counted %v, want 20", got)
	}
	// At most: a clock hour that turns during the test's 20 s starts the
	// count again.
	if n := b.count(t, `SELECT used FROM reconcile_budgets WHERE source_id = $1`, b.sourceID); n > 5 {
		t.Fatalf("budget used = %d, want the 5 answered requests", n)
	}
}

// Issue 34: an --until after now is cut at now, said in the report and the
// run's row; nothing stored is later than now; and the next automatic run
// recovers an event created after the manual one.
func TestAFutureUntilIsCutAtNowAndSkipsNothing(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	if _, err := b.runner.Source(ctx, b.sourceID, provider.Window{}); err != nil {
		t.Fatal(err)
	}
	rep, err := b.runner.Source(ctx, b.sourceID, provider.Window{Since: time.Now().Add(-time.Hour), Until: time.Now().Add(24 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Clamped || rep.Window.Until.After(time.Now()) {
		t.Fatalf("window %v clamped %v, want it cut at now", rep.Window, rep.Clamped)
	}
	if n := b.count(t, `SELECT count(*) FROM reconcile_runs WHERE source_id = $1 AND (until > now() OR since > now())`, b.sourceID); n != 0 {
		t.Fatal("a run row holds a time after now")
	}
	if n := b.count(t, `SELECT count(*) FROM reconcile_runs WHERE id = $1 AND note LIKE '%cut at now%'`, rep.RunID); n != 1 {
		t.Fatal("the run's row does not say its until was cut")
	}
	if n := b.count(t, `SELECT count(*) FROM reconcile_positions WHERE source_id = $1 AND covered_until > now()`, b.sourceID); n != 0 {
		t.Fatal("the position is after now")
	}
	late := paidInvoices(1, time.Now())
	b.stripe.Record(late...)
	next, err := b.runner.Source(ctx, b.sourceID, provider.Window{})
	if err != nil {
		t.Fatal(err)
	}
	if next.Corrections[reconcile.OutcomeRecovered] != 1 {
		t.Fatalf("the automatic run after it recovered %v, want the event created after the manual run", next.Corrections)
	}
}

// Issue 34: every run of a known source is a row, refused ones too: status
// shows a run that could not begin, with why.
func TestARefusedRunIsInStatus(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	at := time.Now().Add(-time.Hour)
	if _, err := b.runner.Source(ctx, b.sourceID, provider.Window{Since: at, Until: at}); !errors.Is(err, reconcile.ErrWindow) {
		t.Fatalf("an empty window: %v, want ErrWindow", err)
	}
	if err := b.store.ClearAPICredentials(ctx, b.sourceID); err != nil {
		t.Fatal(err)
	}
	if _, err := b.runner.Source(ctx, b.sourceID, provider.Window{}); err == nil {
		t.Fatal("a source without credentials was reconciled")
	}
	got, err := reconcile.Runs(ctx, b.pool, b.sourceID, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("runs in status: %d, want the 2 refused", len(got))
	}
	for _, r := range got {
		if r.Outcome != reconcile.OutcomeRefused || r.Error == "" || r.FinishedAt == nil {
			t.Fatalf("run %+v, want refused, finished, with its reason", r)
		}
	}
	// The run without credentials has no kind to count it by.
	if got := runsOf(b.reg, "refused") + runs(b.reg, "unknown", "refused"); got != 2 {
		t.Fatalf("refused runs counted %v, want 2", got)
	}
}

// Issue 34: the schedule counts its interval from the last automatic run
// stored in Postgres, not from the process's start: a process restarted
// more often than the interval still reconciles once every interval. Not
// parallel: a loop reaches every source of the database.
func TestTheScheduleSurvivesRestartsMoreFrequentThanItsInterval(t *testing.T) {
	b := setup(t)
	const every = 2 * time.Second
	cfg := reconcile.Config{Every: every, Jitter: 50 * time.Millisecond}
	deadline := time.Now().Add(7 * time.Second)
	for time.Now().Before(deadline) {
		// One process's life: shorter than the interval.
		runner, _ := b.runnerWith(cfg)
		ctx, cancel := context.WithTimeout(context.Background(), 700*time.Millisecond)
		if err := runner.Loop(ctx); err != nil {
			t.Fatal(err)
		}
		cancel()
	}
	rows, err := b.pool.Query(context.Background(), `SELECT started_at FROM reconcile_runs WHERE source_id = $1 AND automatic ORDER BY id`, b.sourceID)
	if err != nil {
		t.Fatal(err)
	}
	var starts []time.Time
	for rows.Next() {
		var at time.Time
		if err := rows.Scan(&at); err != nil {
			t.Fatal(err)
		}
		starts = append(starts, at)
	}
	if len(starts) < 3 {
		t.Fatalf("%d scheduled runs in 7s of processes living 0.7s each, want at least 3 (one every %s)", len(starts), every)
	}
	for i := 1; i < len(starts); i++ {
		if gap := starts[i].Sub(starts[i-1]); gap < every-100*time.Millisecond {
			t.Fatalf("runs %s apart, want one every %s", gap, every)
		}
	}
}

// Issue 34: a 403 on the optional invoice-payments lookup, answered with
// the body Stripe documents, makes the run partial and names the
// permission in the run's row and the metric; what was listed is entered
// and the position moves on.
func TestARefusedLookupMakesTheRunPartialAndNamesThePermission(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	b.stripe.Record(paidInvoices(3, time.Now().Add(-time.Minute))...)
	b.stripe.ForbidInvoicePayments()
	// A refund waiting for the invoice its payment intent paid (as ingest
	// keeps one: tests of ingest show how it gets there).
	if _, err := b.pool.Exec(ctx, `INSERT INTO inbox_waiting (inbox_id, tenant_id, source_id, source_account, object_type, via, topic, headers)
		SELECT -1 * (extract(epoch from now()) * 1000000)::bigint, tenant_id, id, account, 'invoice', ARRAY['pi_waiting'], 'x', '{}' FROM sources WHERE id = $1`,
		b.sourceID); err != nil {
		t.Fatal(err)
	}
	runner, reg := b.runnerWith(reconcile.Config{})
	rep, err := runner.Source(ctx, b.sourceID, provider.Window{})
	if err != nil {
		t.Fatalf("a partial run is not a failure: %v", err)
	}
	if rep.Outcome != reconcile.OutcomePartial || rep.Missing != "rak_invoice_read" || rep.Corrections[reconcile.OutcomeRecovered] != 3 {
		t.Fatalf("report %s, missing %q, recovered %d; want partial, rak_invoice_read, 3", rep.Outcome, rep.Missing, rep.Corrections[reconcile.OutcomeRecovered])
	}
	if got := testenv.Metric(t, reg, "sluice_reconcile_permission_refusals_total", map[string]string{"kind": "stripe", "permission": "rak_invoice_read"}); got != 1 {
		t.Fatalf("permission refusals counted %v, want 1", got)
	}
	if got := runsOf(reg, "partial"); got != 1 {
		t.Fatalf("partial runs counted %v, want 1", got)
	}
	if n := b.count(t, `SELECT count(*) FROM reconcile_positions WHERE source_id = $1 AND since IS NULL AND covered_until IS NOT NULL`, b.sourceID); n != 1 {
		t.Fatal("a partial run did not move the position past its window")
	}
}
