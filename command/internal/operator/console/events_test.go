package console_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/sluicehq/sluice/command/internal/operator/admintoken"
	"github.com/sluicehq/sluice/command/internal/operator/console"
)

// An operator looks an invoice up by its id, opens its event's trail (its
// dead letter, its record set aside), and then its payload: the read is
// audited under the session's token.
func TestSearchAnInvoicesEventAndOpenItsTrail(t *testing.T) {
	t.Parallel()
	b := setup(t)
	w := b.newWorld(t)
	// Its record set aside by a consumer group, as a locked balance row
	// leaves it: the trail says so.
	if _, err := b.pool.Exec(t.Context(), `INSERT INTO consumer_waiting (consumer_group, topic, partition, "offset", key, headers, payload, record_time, reason)
VALUES ('sluice.credits', 'sluice.invoices', 0, 7, 'k', jsonb_build_object('sluice_inboxid', $1::text), '{}', now(), 'balance of workspace w locked by another transaction')`,
		w.inboxID); err != nil {
		t.Fatal(err)
	}
	rec, token := b.token(t, admintoken.RoleRead, "")
	ctx := browser(t)
	b.browserSignIn(t, ctx, token)
	var h1, trail, payload string
	err := chromedp.Run(ctx,
		chromedp.Click(`a[href="/console/events"]`),
		chromedp.WaitVisible(`input[name=object_id]`),
		chromedp.SendKeys(`input[name=object_id]`, w.invoice),
		chromedp.Submit(`input[name=object_id]`),
		chromedp.WaitVisible(`a[href="/console/events/`+w.inboxID+`"]`),
		chromedp.Click(`a[href="/console/events/`+w.inboxID+`"]`),
		chromedp.WaitVisible(`a[href$="/payload"]`),
		chromedp.Text(`h1`, &h1),
		chromedp.Text(`main`, &trail),
	)
	if err != nil {
		t.Fatal(err)
	}
	if h1 != "Event "+w.eventID {
		t.Errorf("trail heading %q, want Event %s", h1, w.eventID)
	}
	contains(t, "the trail", trail, "stripe.invoice.paid", "invoice "+w.invoice, "Dead letters", "no workspace maps customer",
		"Set aside", "balance of workspace w locked by another transaction")
	if strings.Contains(trail, `"amount_paid"`) {
		t.Errorf("the trail shows the payload before it is asked for")
	}
	if n := b.audited(t, rec.ID, "event.read_payload"); n != 0 {
		t.Fatalf("%d payload reads audited before the click", n)
	}
	err = chromedp.Run(ctx,
		chromedp.Click(`a[href$="/payload"]`),
		chromedp.WaitVisible(`pre`),
		chromedp.Text(`pre`, &payload),
	)
	if err != nil {
		t.Fatal(err)
	}
	contains(t, "the payload", payload, `"customer": "`+w.customer+`"`, `"id": "`+w.invoice+`"`)
	if n := b.audited(t, rec.ID, "event.read_payload"); n != 1 {
		t.Errorf("%d payload reads audited under the session's token, want 1", n)
	}
}

// The search keeps its filters in the URL: the view can be shared.
func TestEventSearchKeepsItsFiltersInTheURL(t *testing.T) {
	t.Parallel()
	b := setup(t)
	w := b.newWorld(t)
	_, token := b.token(t, admintoken.RoleRead, "")
	c := b.client(t)
	b.signIn(t, c, token)
	page := b.page(t, c, console.Prefix+"/events?event_type=stripe.invoice.paid&object_id="+w.invoice)
	contains(t, "the shared search", page, `value="`+w.invoice+`"`, `value="stripe.invoice.paid"`, w.eventID)
	other := b.page(t, c, console.Prefix+"/events?object_id=in_nothing")
	if strings.Contains(other, w.eventID) {
		t.Errorf("a search for another object shows %s", w.eventID)
	}
}

// With nothing named, the event list is the newest events, an event
// received hours ago among them (the list used to be the last hour's, which
// at volume read the whole inbox).
func TestEventListNamingNothingShowsTheNewest(t *testing.T) {
	t.Parallel()
	b := setup(t)
	w := b.newWorld(t)
	if _, err := b.pool.Exec(t.Context(), `UPDATE inbox SET received_at = now() - interval '3 hours' WHERE id = $1`, w.inboxID); err != nil {
		t.Fatal(err)
	}
	_, token := b.token(t, admintoken.RoleRead, w.tenant)
	c := b.client(t)
	b.signIn(t, c, token)
	contains(t, "the event list", b.page(t, c, console.Prefix+"/events"), w.eventID)
}
