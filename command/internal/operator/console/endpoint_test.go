package console_test

import (
	"strings"
	"testing"

	"github.com/sluicehq/sluice/command/internal/operator/admintoken"
	"github.com/sluicehq/sluice/command/internal/operator/console"
)

// An endpoint's page shows its health over the last day from the
// deliverer's figures per minute: requests, delivered, failed, the success
// rate, latency quantiles and a bar per hour; figures older than a day are
// left out, and another tenant's token sees none of it.
func TestAnEndpointsPageShowsItsHealthOverTheLastDay(t *testing.T) {
	t.Parallel()
	b := setup(t)
	w := b.newWorld(t)
	other := b.newWorld(t)
	// Two hours with requests (one of them with a failure), and one
	// older than the day.
	if _, err := b.pool.Exec(t.Context(), `
INSERT INTO delivery_minutes (endpoint_id, minute, attempts, delivered, failed, answered, latency_ms_sum, le_50, le_100)
VALUES ($1, date_trunc('minute', now() - interval '2 hours'), 10, 9, 1, 10, 600, 4, 6),
       ($1, date_trunc('minute', now() - interval '1 minute'), 5, 5, 0, 5, 100, 5, 0),
       ($1, date_trunc('minute', now() - interval '30 hours'), 100, 0, 100, 100, 100000, 0, 0)`, w.endpoint); err != nil {
		t.Fatal(err)
	}
	page := b.page(t, b.signedIn(t, admintoken.RoleRead, ""), console.Prefix+"/destinations/"+w.endpoint)
	contains(t, "the endpoint's page", page, "<h2>The last 24 hours</h2>",
		"<dt>Requests</dt><dd>15</dd>", "<dt>Delivered</dt><dd>14</dd>", "<dt>Failed</dt><dd>1</dd>", "<dt>Success rate</dt><dd>93.3%</dd>",
		"in all, 14 delivered, 1 failed, at most 10 in one hour", "https://receiver.example/")
	if n := strings.Count(page, `<rect x=`); n != 3 {
		t.Errorf("the chart draws %d bars, want 3 (two hours delivered, one failed)", n)
	}
	list := b.page(t, b.signedIn(t, admintoken.RoleRead, w.tenant), console.Prefix+"/destinations")
	contains(t, "the tenant's endpoints", list, `href="/console/destinations/`+w.endpoint+`"`)
	c := b.signedIn(t, admintoken.RoleRead, other.tenant)
	resp, err := c.Get(b.srv.URL + console.Prefix + "/destinations/" + w.endpoint)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 && resp.StatusCode != 403 {
		t.Errorf("another tenant's token opens the endpoint's page: %d", resp.StatusCode)
	}
}
