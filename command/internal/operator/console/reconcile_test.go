package console_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/sluicehq/sluice/command/internal/operator/admintoken"
	"github.com/sluicehq/sluice/command/internal/operator/console"
	"github.com/sluicehq/sluice/internal/envelope"
	"github.com/sluicehq/sluice/internal/provider/kinds/stripe/stripetest"
	"github.com/sluicehq/sluice/internal/store/tenancy"
	"github.com/sluicehq/sluice/internal/testenv"
)

// An operator reconciles a Stripe source from the console against a Stripe
// API that answers (stripetest): the dry run reports the invoice the
// webhooks missed and enters nothing; its confirmation enters it, a
// correction of the run in Postgres with the event in the inbox.
func TestReconcileADryRunThenARunAgainstStripe(t *testing.T) {
	t.Parallel()
	b := setupProcess(t, process{topics: envelope.Topics{Prefix: "consolerec" + testenv.RandomSuffix()}, ingests: true})
	w := b.newWorld(t)
	ctx := t.Context()
	source := b.stripeSource(t, w)
	missed := missedEvent(source)

	_, token := b.token(t, admintoken.RoleOperate, w.tenant)
	browser := browser(t)
	b.browserSignIn(t, browser, token)
	since := time.Now().UTC().Add(-2 * time.Hour).Format(time.RFC3339)
	var dry string
	err := chromedp.Run(browser,
		chromedp.Navigate(b.srv.URL+console.Prefix+"/reconciliation"),
		chromedp.SendKeys(`input[name="source_id"]`, source),
		chromedp.SendKeys(`input[name="since"]`, since),
		chromedp.Submit(`input[name="source_id"]`),
		chromedp.WaitVisible(`button.danger`),
		chromedp.Text(`h1`, &dry),
	)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(dry, "dry run") {
		t.Errorf("the first answer is %q, want the dry run's", dry)
	}
	contains(t, "the dry run's report", html(t, browser), "<td>1</td>") // found: the missed invoice
	if n := b.corrections(t, source); n != 0 {
		t.Fatalf("the dry run entered %d corrections", n)
	}
	var ran string
	step, cancel := context.WithTimeout(browser, time.Minute)
	defer cancel()
	// Submitted through its form, not clicked at coordinates: console.js
	// shows the Copy buttons once the page's script runs, which on a loaded
	// machine can move the button after a click's position was taken, and
	// that click then lands beside it and submits nothing.
	err = chromedp.Run(step, chromedp.Submit(`button.danger`),
		// The run's answer offers no run: the dry run's page is gone.
		chromedp.WaitNotPresent(`button.danger`), chromedp.WaitVisible(`h1`), chromedp.Text(`h1`, &ran))
	if err != nil {
		var loc, body string
		_ = chromedp.Run(context.WithoutCancel(browser), chromedp.Location(&loc), chromedp.OuterHTML("main", &body))
		t.Fatalf("the run's answer: %v (at %s: %.3000s)", err, loc, body)
	}
	if ran != "Reconciliation run" {
		t.Errorf("the confirmation's answer is %q", ran)
	}
	if n := b.corrections(t, source); n != 1 {
		t.Fatalf("%d corrections after the run, want 1 (the missed invoice)", n)
	}
	var inbox int
	if err := b.pool.QueryRow(ctx, `SELECT count(*) FROM inbox i JOIN reconcile_corrections c ON c.inbox_id = i.id
WHERE c.source_id = $1 AND i.event_id = $2`, source, missed).Scan(&inbox); err != nil {
		t.Fatal(err)
	}
	if inbox != 1 {
		t.Errorf("the missed event is in the inbox %d times through the correction, want 1", inbox)
	}
	// The runs page lists both, the dry run and the run.
	if err := chromedp.Run(browser, chromedp.Navigate(b.srv.URL+console.Prefix+"/reconciliation?source_id="+source), chromedp.WaitVisible(`h1`)); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(html(t, browser), `<a href="/console/sources/`+source+`">`); n != 2 {
		t.Errorf("the runs page lists %d runs of the source, want 2 (the dry run and the run)", n)
	}
	// The source's page, from the sources list: credentials present, and
	// its runs, newest first.
	link := `a[href="/console/sources/` + source + `"]`
	err = chromedp.Run(browser, chromedp.Navigate(b.srv.URL+console.Prefix+"/sources"), chromedp.Click(link), chromedp.WaitVisible(`dl.figures`))
	if err != nil {
		t.Fatal(err)
	}
	page := html(t, browser)
	const ok = `<span class="badge good">ok</span>`
	contains(t, "the source's page", page, "<dt>API credentials</dt><dd>present</dd>", "<td>run</td><td>"+ok+"</td><td>1</td><td>1</td>",
		"<td>dry run</td><td>"+ok+"</td><td>1</td><td>1</td>") // a dry run's: what it would have corrected
	if i := strings.Index(page, "<td>dry run</td>"); i < 0 || strings.Index(page, "<td>run</td>") > i {

		t.Errorf("the source's runs are not newest first")
	}
	if other := b.page(t, b.signedIn(t, admintoken.RoleRead, w.tenant), console.Prefix+"/sources/"+w.source); !strings.Contains(other, "No API credentials") {
		t.Errorf("a source without API credentials does not say so")
	}
}

// stripeSource is a Stripe source of w's tenant whose API credentials
// point at a fake Stripe API holding a paid invoice of w's customer that
// no webhook brought (its event id: missedEvent).
func (b *bundle) stripeSource(t testing.TB, w world) string {
	t.Helper()
	ctx := t.Context()
	source, err := b.store.CreateSource(ctx, tenancy.NewSource{TenantID: w.tenant, Kind: "stripe", Account: "acct_api" + testenv.RandomSuffix(),
		Secret: "whsec_" + testenv.RandomSuffix()})
	if err != nil {
		t.Fatal(err)
	}
	stripe := stripetest.New(t)
	if err := b.store.SetAPICredentials(ctx, source, fmt.Appendf(nil, `{"secret_key":"rk_test_x","api_base":%q}`, stripe.URL)); err != nil {
		t.Fatal(err)
	}
	stripe.Record(stripetest.Event{ID: missedEvent(source), Type: "invoice.paid", Created: time.Now().Add(-30 * time.Minute), APIVersion: "2024-06-20",
		Object: map[string]any{"id": "in_missed", "object": "invoice", "customer": w.customer, "amount_paid": 1500, "currency": "usd", "status": "paid"}})
	return source
}

// missedEvent is the event id of the paid invoice source's Stripe API
// holds and no webhook brought.
func missedEvent(source string) string { return "evt_missed_" + source[:8] }

// corrections counts the reconciliation corrections of source.
func (b *bundle) corrections(t *testing.T, source string) int {
	t.Helper()
	var n int
	if err := b.pool.QueryRow(t.Context(), `SELECT count(*) FROM reconcile_corrections WHERE source_id = $1`, source).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
