package console_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/command/internal/operator/admintoken"
	"github.com/sluicehq/sluice/command/internal/operator/console"
	"github.com/sluicehq/sluice/internal/provider/kinds"
	"github.com/sluicehq/sluice/internal/store/catalog"
	"github.com/sluicehq/sluice/internal/store/tenancy"
)

// post sends a console form with the page's CSRF token and returns the
// status and body.
func (b *bundle) post(t *testing.T, c *http.Client, page, path string, form map[string][]string) (int, string) {
	t.Helper()
	form["csrf"] = []string{csrfOf(t, b.page(t, c, page))}
	resp, err := c.PostForm(b.srv.URL+path, form)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// A tenant's operator creates an endpoint from the console: the secret is
// shown once, and the endpoint is the tenant's.
func TestCreateAnEndpointShowsItsSecretOnce(t *testing.T) {
	t.Parallel()
	b := setup(t)
	w := b.newWorld(t)
	_, token := b.token(t, admintoken.RoleOperate, w.tenant)
	c := b.client(t)
	b.signIn(t, c, token)
	status, body := b.post(t, c, console.Prefix+"/destinations", console.Prefix+"/destinations",
		map[string][]string{"url": {"https://receiver.example/console"}, "filters": {"stripe.invoice.* stripe.charge.*"}})
	if status != http.StatusCreated || !strings.Contains(body, "whsec_") {
		t.Fatalf("create: %d, want 201 showing the secret: %.500s", status, body)
	}
	var n int
	if err := b.pool.QueryRow(t.Context(), `SELECT count(*) FROM endpoints WHERE tenant_id = $1 AND url = 'https://receiver.example/console'
AND filters = ARRAY['stripe.invoice.*', 'stripe.charge.*']`, w.tenant).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Errorf("%d such endpoints of the tenant, want 1", n)
	}
	if list := b.page(t, c, console.Prefix+"/destinations"); strings.Contains(list, "whsec_") {
		t.Errorf("the list shows a secret")
	}
}

// A row's action goes to the API path its op names, with the row's ids in
// it: deprecating an event type from its page.
func TestDeprecateAnEventTypeFromItsRow(t *testing.T) {
	t.Parallel()
	b := setup(t)
	w := b.newWorld(t)
	types, err := catalog.New(b.pool, catalog.Config{Providers: kinds.Builtin()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := types.Create(t.Context(), catalog.Spec{TenantID: w.tenant, Kind: "api", Type: "order.placed", Schema: []byte(`{"type":"object"}`),
		ResourceType: "order"}); err != nil {
		t.Fatal(err)
	}
	_, token := b.token(t, admintoken.RoleOperate, "")
	c := b.client(t)
	b.signIn(t, c, token)
	page := console.Prefix + "/event-types?tenant_id=" + w.tenant
	if list := b.page(t, c, page); !strings.Contains(list, `value="`+w.tenant+`/api/order.placed"`) {
		t.Fatalf("the event types page offers no action on api.order.placed")
	}
	status, _ := b.post(t, c, page, console.Prefix+"/act", map[string][]string{"op": {"eventtype.deprecate"}, "id": {w.tenant + "/api/order.placed"},
		"tenant_id": {w.tenant}})
	if status != http.StatusSeeOther {
		t.Fatalf("deprecate: %d", status)
	}
	var deprecated int
	if err := b.pool.QueryRow(t.Context(), `SELECT count(*) FROM event_types WHERE tenant_id = $1 AND status = 'deprecated'`, w.tenant).Scan(&deprecated); err != nil {
		t.Fatal(err)
	}
	if deprecated != 1 {
		t.Errorf("%d deprecated event types, want 1", deprecated)
	}
	// An id that would make another path is refused.
	if status, _ := b.post(t, c, page, console.Prefix+"/act", map[string][]string{"op": {"source.disable"}, "id": {w.source + "/../x"}}); status != http.StatusNotFound {
		t.Errorf("an id with segments for a one-segment action: %d, want 404", status)
	}
}

// A reconciliation asked from the console is a dry run unless it is the
// confirmation of one. (This listener's process does not ingest, so the API
// answers 503, shown as such.)
func TestReconcileIsADryRunFirst(t *testing.T) {
	t.Parallel()
	b := setup(t)
	w := b.newWorld(t)
	_, token := b.token(t, admintoken.RoleOperate, "")
	c := b.client(t)
	b.signIn(t, c, token)
	page := console.Prefix + "/reconciliation"
	b.api.take()
	status, body := b.post(t, c, page, page, map[string][]string{"source_id": {w.source}, "since": {"2026-01-02T15:04"}})
	if status != http.StatusServiceUnavailable || !strings.Contains(body, "not available on this listener") {
		t.Errorf("reconcile here: %d, want the API's 503 shown: %.300s", status, body)
	}
	sent := strings.Join(b.api.take(), "\n")
	if !strings.Contains(sent, "POST /admin/v1/sources/"+w.source+"/reconcile "+`{"dry_run":true,"since":"2026-01-02T15:04:00Z"}`) {
		t.Errorf("the console asked the API for other than a dry run of the window:\n%s", sent)
	}
	b.post(t, c, page, page, map[string][]string{"source_id": {w.source}, "execute": {"true"}})
	if sent := strings.Join(b.api.take(), "\n"); !strings.Contains(sent, `{"dry_run":false}`) {
		t.Errorf("the confirmation asked the API for other than the run:\n%s", sent)
	}
}

// A source's secret rotated from the console: the one Sluice made is shown
// once, and the source now holds two secrets (the old one in its overlap).
func TestRotateASourcesSecret(t *testing.T) {
	t.Parallel()
	b := setup(t)
	w := b.newWorld(t)
	src, err := b.store.CreateSource(t.Context(), tenancy.NewSource{TenantID: w.tenant, Kind: "standard_webhooks", Account: "acct_rot",
		Secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"})
	if err != nil {
		t.Fatal(err)
	}
	_, token := b.token(t, admintoken.RoleOperate, w.tenant)
	c := b.client(t)
	b.signIn(t, c, token)
	if list := b.page(t, c, console.Prefix+"/sources"); !strings.Contains(list, "/sources/"+src+"/rotate") {
		t.Fatalf("the sources page offers no rotation of %s", src)
	}
	form := console.Prefix + "/sources/" + src + "/rotate"
	status, body := b.post(t, c, form, form, map[string][]string{"overlap_hours": {"2"}})
	if status != http.StatusOK || !strings.Contains(body, "whsec_") {
		t.Fatalf("rotate: %d, want the new secret shown: %.300s", status, body)
	}
	var secrets int
	if err := b.pool.QueryRow(t.Context(), `SELECT count(*) FROM source_secrets WHERE source_id = $1`, src).Scan(&secrets); err != nil {
		t.Fatal(err)
	}
	if secrets != 2 {
		t.Errorf("%d secrets after the rotation, want 2 (the old one in its overlap)", secrets)
	}
}
