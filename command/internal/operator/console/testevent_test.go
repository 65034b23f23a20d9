package console_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/sluicehq/sluice/command/internal/operator/admintoken"
	"github.com/sluicehq/sluice/command/internal/operator/console"
)

// A test event of a chosen type is sent from the endpoint's page: of a type
// the tenant received, its last event with every string masked but those
// that say what it is; of a type it never received, a minimal example of
// the type's schema; the page says which, and shows what was sent and what
// the endpoint answered. A type nobody declares is refused in words.
func TestATestEventOfAChosenTypeFromTheEndpointsPage(t *testing.T) {
	t.Parallel()
	b := setup(t)
	w := b.newWorld(t)
	// The tenant's last invoice.paid as ingest keeps it: the provider's
	// own type, from the tenant's stripe source.
	if _, err := b.pool.Exec(t.Context(), `
INSERT INTO inbox (tenant_id, source_id, source_account, event_id, event_type, object_type, object_id, status, body_sha256, body)
VALUES ($1, $2, $3, $4 || '_last', 'invoice.paid', 'invoice', $5, 'published', '\x00',
        convert_to('{"id":"' || $4 || '_last","type":"invoice.paid","data":{"object":{"object":"invoice","customer":"' || $6 || '","customer_email":"jo@example.com","amount_paid":4200}}}', 'UTF8'))`,
		w.tenant, w.source, w.account, w.eventID, w.invoice, w.customer); err != nil {
		t.Fatal(err)
	}
	_, token := b.token(t, admintoken.RoleOperate, w.tenant)
	ctx := browser(t)
	b.browserSignIn(t, ctx, token)
	send := func(eventType string) string {
		t.Helper()
		var page string
		if err := chromedp.Run(ctx,
			chromedp.Navigate(b.srv.URL+console.Prefix+"/destinations/"+w.endpoint),
			chromedp.SendKeys(`input[name="event_type"]`, eventType),
			chromedp.Click(`form[action$="/test"] button[data-op="endpoint.test"]`, chromedp.NodeVisible),
			chromedp.WaitNotPresent(`input[name="event_type"]`), chromedp.WaitVisible(`main h1`),
			chromedp.OuterHTML(`main`, &page),
		); err != nil {
			t.Fatal(err)
		}
		return page
	}
	last := send("stripe.invoice.paid")
	contains(t, "a test of a received type", last, "A signed <code>stripe.invoice.paid</code> event was sent",
		"the tenant's last event of the type", "3 strings masked", `"customer":"masked"`, `"customer_email":"masked"`,
		`"object":"invoice"`, `"type":"invoice.paid"`, `"amount_paid":4200`, `{"received":"stripe.invoice.paid"}`)
	if strings.Contains(last, w.customer) || strings.Contains(last, "jo@example.com") {
		t.Errorf("the test event carried the last event's customer unmasked")
	}
	schema := send("api." + worldType)
	contains(t, "a test of a type never received", schema, "A signed <code>api.order.shipped</code> event was sent",
		"a minimal example of the type's schema", `{"order_id":null}`)
	unknown := send("stripe.nothing.such")
	contains(t, "a test of an unknown type", unknown, "none received, and no schema declares it")
}
