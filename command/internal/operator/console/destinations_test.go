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

// A delivery's page lists its requests: the endpoint's status, what it
// answered, the duration and the error; the deliveries list links to it.
func TestADeliveryShowsItsRequests(t *testing.T) {
	t.Parallel()
	b := setup(t)
	w := b.newWorld(t)
	c := b.signedIn(t, admintoken.RoleRead, w.tenant)
	if list := b.page(t, c, console.Prefix+"/deliveries"); !strings.Contains(list, `href="`+console.Prefix+"/deliveries/"+w.delivery+`"`) {
		t.Errorf("the deliveries list does not link to delivery %s", w.delivery)
	}
	page := b.page(t, c, console.Prefix+"/deliveries/"+w.delivery)
	contains(t, "the delivery's page", page, "<td>500</td>", "12 ms", "not a 2xx answer", "receiver fell over", w.eventID, "dead")
}

// Replaying an endpoint's window: the page counts the window first (the
// API's dry run, nothing moves), and the confirmation replays it.
func TestReplayAnEndpointsWindowCountsFirst(t *testing.T) {
	t.Parallel()
	b := setup(t)
	w := b.newWorld(t)
	c := b.signedIn(t, admintoken.RoleOperate, w.tenant)
	since, until := time.Now().UTC().Add(-time.Hour).Format(time.RFC3339), time.Now().UTC().Add(time.Minute).Format(time.RFC3339)
	page := console.Prefix + "/destinations/" + w.endpoint + "/replay?" + url.Values{"since": {since}, "until": {until}}.Encode()
	count := b.page(t, c, page)
	contains(t, "the dry run", count, "<strong>1</strong> delivery, created from", "Replay 1 delivery")
	if state := b.deliveryState(t, w.delivery); state != "dead" {
		t.Fatalf("the dry run moved the delivery to %s", state)
	}
	status, body := b.post(t, c, page, console.Prefix+"/destinations/"+w.endpoint+"/replay", map[string][]string{"since": {since}, "until": {until}})
	if status != http.StatusOK || !strings.Contains(body, "<strong>1</strong> delivery back to pending") {
		t.Fatalf("replay: %d %.500s", status, body)
	}
	if state := b.deliveryState(t, w.delivery); state != "pending" {
		t.Errorf("the replayed delivery is %s, want pending", state)
	}
	// A window the API refuses is shown with its words, above the form.
	if bad := b.page(t, c, console.Prefix+"/destinations/"+w.endpoint+"/replay?since="+until+"&until="+since); !strings.Contains(bad, "must be after since") {
		t.Errorf("a reversed window is not refused on the page")
	}
}

// A test event's result is a page of its own: what the endpoint answered.
func TestATestEventShowsWhatTheEndpointAnswered(t *testing.T) {
	t.Parallel()
	b := setup(t)
	w := b.newWorld(t)
	c := b.signedIn(t, admintoken.RoleOperate, w.tenant)
	list := console.Prefix + "/destinations"
	if !strings.Contains(b.page(t, c, list), `action="`+console.Prefix+"/destinations/"+w.endpoint+`/test"`) {
		t.Fatalf("the destinations page offers no test of %s", w.endpoint)
	}
	status, body := b.post(t, c, list, console.Prefix+"/destinations/"+w.endpoint+"/test", map[string][]string{"tenant_id": {w.tenant}})
	if status != http.StatusOK {
		t.Fatalf("test: %d %.500s", status, body)
	}
	contains(t, "the test's page", body, "the endpoint answered 202", "7 ms", "{&#34;received&#34;:&#34;sluice.test&#34;}")
}

func (b *bundle) deliveryState(t *testing.T, id string) string {
	t.Helper()
	var s string
	if err := b.pool.QueryRow(t.Context(), `SELECT state FROM deliveries WHERE id = $1`, id).Scan(&s); err != nil {
		t.Fatal(err)
	}
	return s
}

// The destinations' actions need the session's CSRF token like every
// other: without it nothing is sent and nothing replayed.
func TestDestinationActionsNeedTheCSRFToken(t *testing.T) {
	t.Parallel()
	b := setup(t)
	w := b.newWorld(t)
	rec, token := b.token(t, admintoken.RoleOperate, w.tenant)
	c := b.client(t)
	b.signIn(t, c, token)
	for _, path := range []string{"/destinations/" + w.endpoint + "/test", "/destinations/" + w.endpoint + "/replay"} {
		resp, err := c.PostForm(b.srv.URL+console.Prefix+path, url.Values{"since": {"2026-01-01T00:00:00Z"}, "until": {time.Now().UTC().Format(time.RFC3339)}})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("POST %s without the CSRF token: %d, want 403", path, resp.StatusCode)
		}
	}
	if state := b.deliveryState(t, w.delivery); state != "dead" {
		t.Errorf("the delivery is %s after a refused replay", state)
	}
	if n := b.audited(t, rec.ID, "endpoint.test"); n != 0 {
		t.Errorf("a refused test was sent (%d audited)", n)
	}
}
