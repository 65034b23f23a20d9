package console_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

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

// An endpoint is paused and resumed from its page (asserted in Postgres,
// each row offering only the action its state allows), and its dead
// deliveries are sent again by a selection only after its dry run counted
// them: a selection matching none offers nothing, and the retry moves
// exactly the counted delivery back to pending, not the one another type's.
func TestPauseResumeAndRetryDeadDeliveriesFromTheConsole(t *testing.T) {
	t.Parallel()
	b := setup(t)
	w := b.newWorld(t)
	var other string
	if err := b.pool.QueryRow(t.Context(), `
INSERT INTO deliveries (endpoint_id, tenant_id, webhook_id, partition_key, state, attempts, last_status, last_error, latency_ms,
                        inbox_id, event_id, event_type, source, topic, partition, "offset")
SELECT endpoint_id, tenant_id, webhook_id || '_other', 'charge/ch_1', 'dead', 1, 500, 'status 500', 12, inbox_id, event_id, 'stripe.charge.refunded',
       source, topic, partition, "offset" + 1
FROM deliveries WHERE id = $1 RETURNING id::text`, w.delivery).Scan(&other); err != nil {
		t.Fatal(err)
	}
	c := b.signedIn(t, admintoken.RoleOperate, w.tenant)
	page := console.Prefix + "/destinations/" + w.endpoint
	paused := func() bool {
		var p bool
		if err := b.pool.QueryRow(t.Context(), `SELECT paused_at IS NOT NULL FROM endpoints WHERE id = $1`, w.endpoint).Scan(&p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, step := range []struct {
		op, offered string
		want        bool
	}{{"endpoint.pause", `data-op="endpoint.resume"`, true}, {"endpoint.resume", `data-op="endpoint.pause"`, false}} {
		if status, body := b.post(t, c, page, console.Prefix+"/act", map[string][]string{"op": {step.op}, "id": {w.endpoint}}); status != http.StatusSeeOther {
			t.Fatalf("%s: %d %.300s", step.op, status, body)
		}
		if paused() != step.want {
			t.Fatalf("after %s the endpoint's paused is %v", step.op, !step.want)
		}
		if got := b.page(t, c, page); !strings.Contains(got, step.offered) || strings.Contains(got, `data-op="`+step.op+`"`) {
			t.Errorf("after %s the endpoint's page does not offer only %s", step.op, step.offered)
		}
	}

	window := url.Values{"since": {time.Now().UTC().Add(-time.Hour).Format("2006-01-02T15:04")}, "until": {time.Now().UTC().Add(time.Hour).Format("2006-01-02T15:04")}}
	none := url.Values{"event_type": {"github.*"}}
	for k, v := range window {
		none[k] = v
	}
	if got := b.page(t, c, page+"/retry-dead?"+none.Encode()); !strings.Contains(got, "Nothing to retry") || strings.Contains(got, `class="danger"`) {
		t.Errorf("a selection matching no dead delivery offers a retry")
	}
	window.Set("event_type", "stripe.invoice.*")
	count := b.page(t, c, page+"/retry-dead?"+window.Encode())
	contains(t, "the dry run", count, "<strong>1</strong> dead delivery", ">Retry 1 delivery</button>")
	if b.deliveryState(t, w.delivery) != "dead" {
		t.Fatalf("the dry run changed the delivery")
	}
	form := map[string][]string{"since": window["since"], "until": window["until"], "event_type": window["event_type"], "error_class": {""}}
	status, body := b.post(t, c, page+"/retry-dead?"+window.Encode(), page+"/retry-dead", form)
	if status != http.StatusOK || !strings.Contains(body, "<strong>1</strong> dead delivery back to pending") {
		t.Fatalf("retry: %d %.500s", status, body)
	}
	if got := b.deliveryState(t, w.delivery); got != "pending" {
		t.Errorf("the counted delivery is %s after the retry, want pending", got)
	}
	if got := b.deliveryState(t, other); got != "dead" {
		t.Errorf("another type's delivery is %s after the retry, want dead", got)
	}
}
