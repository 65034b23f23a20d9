package console_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/sluicehq/sluice/command/internal/operator/admintoken"
	"github.com/sluicehq/sluice/command/internal/operator/console"
	"github.com/sluicehq/sluice/internal/store/endpoints"
)

// A delivery's page links to its request as sent, rebuilt by the API: the
// method and URL, every header with the signature and the endpoint's own
// header values masked, the event's body exactly as received, and the
// endpoint's answers below; the read is audited as a payload read.
func TestADeliveryShowsTheRequestAsSent(t *testing.T) {
	t.Parallel()
	b := setup(t)
	w := b.newWorld(t)
	const secret = "Bearer s3cret-of-the-endpoint"
	if _, err := b.ends.UpdateEndpoint(t.Context(), w.endpoint, endpoints.Patch{Headers: &map[string]string{"Authorization": secret}}); err != nil {
		t.Fatal(err)
	}
	rec, token := b.token(t, admintoken.RoleRead, w.tenant)
	ctx := browser(t)
	b.browserSignIn(t, ctx, token)
	var h1 string
	if err := chromedp.Run(ctx,
		chromedp.Navigate(b.srv.URL+console.Prefix+"/deliveries/"+w.delivery),
		chromedp.Click(`a[href="`+console.Prefix+`/deliveries/`+w.delivery+`/request"]`, chromedp.NodeVisible),
		chromedp.WaitVisible(`pre[aria-label="The request's line and headers"]`),
		chromedp.Text(`h1`, &h1),
	); err != nil {
		t.Fatal(err)
	}
	if h1 != "The request of delivery "+w.delivery {
		t.Fatalf("the request's link opened %q", h1)
	}
	var head, page string
	if err := chromedp.Run(ctx, chromedp.Text(`pre[aria-label="The request's line and headers"]`, &head),
		chromedp.OuterHTML(`main`, &page)); err != nil {
		t.Fatal(err)
	}
	contains(t, "the request's head", head, "POST https://receiver.example/", "Authorization: the endpoint's value, never shown   (masked)",
		"Content-Type: application/json", "User-Agent: Sluice-Destinations/1", "webhook-id: msg_"+w.inboxID,
		"webhook-signature: v1,…   (masked)", "ce-id: "+w.eventID, "ce-type: stripe.invoice.paid")
	contains(t, "the request's page", page, `"id":"`+w.invoice+`"`, "receiver fell over", "the answers' headers are not kept")
	if strings.Contains(page, "s3cret") {
		t.Errorf("the request's page shows the endpoint's header value")
	}
	if n := b.audited(t, rec.ID, "delivery.read_request"); n != 1 {
		t.Errorf("the request's read was audited %d times, want 1", n)
	}
}
