package console_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/command/internal/operator/admintoken"
	"github.com/sluicehq/sluice/command/internal/operator/console"
)

// A tenant-scoped token sees its tenant only: no page it can open, and no
// answer of the API any page fetched for it, holds another tenant's ids;
// the other tenant's pages are 404, and the deployment's are refused.
func TestTenantScopedTokenSeesOnlyItsTenant(t *testing.T) {
	t.Parallel()
	b := setup(t)
	own, other := b.newWorld(t), b.newWorld(t)
	_, token := b.token(t, admintoken.RoleOperate, own.tenant)
	c := b.client(t)
	b.signIn(t, c, token)
	b.api.take()
	pages := []string{"/", "/events", "/events?object_id=" + own.invoice, "/events/" + own.inboxID, "/events/" + own.inboxID + "/payload",
		"/dead-letters", "/dead-letters?replayed=true", "/dead-letters/" + own.deadLetter + "/replay", "/dead-letters/replay?reason=workspace",
		"/conflicts", "/sources", "/destinations", "/deliveries", "/deliveries/" + own.delivery, "/event-types", "/reconciliation", "/audit",
		"/event-types/" + own.tenant + "/api/" + worldType, "/sources/" + own.source,
		"/destinations/" + own.endpoint + "/replay?since=2026-01-01T00:00:00Z&until=2026-01-02T00:00:00Z",
		// Asked for the other tenant: answered with the token's own.
		"/destinations?tenant_id=" + other.tenant, "/event-types?tenant_id=" + other.tenant}
	secrets := map[string]string{"tenant": other.tenant, "source": other.source, "event": other.eventID, "invoice": other.invoice,
		"customer": other.customer, "endpoint": other.endpoint, "account": other.account}
	for _, p := range pages {
		body := b.page(t, c, console.Prefix+p)
		for what, id := range secrets {
			if strings.Contains(body, id) {
				t.Errorf("page %s shows the other tenant's %s %s", p, what, id)
			}
		}
		if p == "/events/"+own.inboxID && !strings.Contains(body, own.eventID) {
			t.Errorf("page %s lacks the token's own event", p)
		}
	}
	answers := b.api.take()
	if len(answers) < len(pages) {
		t.Fatalf("%d API answers for %d pages: the recorder missed some", len(answers), len(pages))
	}
	for _, a := range answers {
		for what, id := range secrets {
			if strings.Contains(a, id) {
				t.Errorf("an answer fetched for a page holds the other tenant's %s: %.300s", what, a)
			}
		}
	}
	// The other tenant's pages are not found; the deployment's refused.
	for p, want := range map[string]int{"/events/" + other.inboxID: http.StatusNotFound, "/events/" + other.inboxID + "/payload": http.StatusNotFound,
		"/dead-letters/" + other.deadLetter + "/replay": http.StatusNotFound, "/consumer-groups": http.StatusForbidden,
		"/deliveries?tenant_id=" + other.tenant: http.StatusNotFound, "/deliveries/" + other.delivery: http.StatusNotFound,
		"/destinations/" + other.endpoint + "/replay":                                                       http.StatusNotFound,
		"/destinations/" + other.endpoint + "/replay?since=2026-01-01T00:00:00Z&until=2026-01-02T00:00:00Z": http.StatusNotFound} {
		resp, err := c.Get(b.srv.URL + console.Prefix + p)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("page %s: %d, want %d", p, resp.StatusCode, want)
		}
		for what, id := range secrets {
			// The id the page was asked for is named in its refusal.
			if strings.Contains(string(body), id) && what != "tenant" && !strings.Contains(p, id) {
				t.Errorf("page %s shows the other tenant's %s", p, what)
			}
		}
	}
	// A form aimed at the other tenant's dead letter changes nothing.
	page := b.page(t, c, console.Prefix+"/dead-letters")
	resp, err := c.PostForm(b.srv.URL+console.Prefix+"/dead-letters/"+other.deadLetter+"/replay", map[string][]string{"csrf": {csrfOf(t, page)}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("replay of the other tenant's dead letter: %d, want 404", resp.StatusCode)
	}
	for _, action := range []string{"/destinations/" + other.endpoint + "/test", "/destinations/" + other.endpoint + "/replay"} {
		if status, _ := b.post(t, c, console.Prefix+"/dead-letters", console.Prefix+action,
			map[string][]string{"since": {"2026-01-01T00:00:00Z"}, "until": {"2026-01-02T00:00:00Z"}}); status != http.StatusNotFound {
			t.Errorf("POST %s of the other tenant's endpoint: %d, want 404", action, status)
		}
	}
	if state := b.deliveryState(t, other.delivery); state != "dead" {
		t.Errorf("the other tenant's delivery is %s", state)
	}
	var replayed int
	if err := b.pool.QueryRow(t.Context(), `SELECT count(*) FROM dead_letters WHERE id = $1 AND replayed_at IS NOT NULL`, other.deadLetter).Scan(&replayed); err != nil {
		t.Fatal(err)
	}
	if replayed != 0 {
		t.Errorf("the other tenant's dead letter was replayed")
	}
}
