package console_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/command/internal/operator/admintoken"
	"github.com/sluicehq/sluice/command/internal/operator/console"
)

// An operator finds a tenant by what they type in any tenant field: a
// name only one tenant's holds opens the page with its id (the rest of the
// query kept), one several hold lists them to pick from, one none holds
// says so; a tenant-scoped token's tenant_id is never searched.
func TestAnOperatorFindsATenantByName(t *testing.T) {
	t.Parallel()
	b := setup(t)
	w := b.newWorld(t)
	b.newWorld(t)
	var name string
	if err := b.pool.QueryRow(t.Context(), `SELECT name FROM tenants WHERE id = $1`, w.tenant).Scan(&name); err != nil {
		t.Fatal(err)
	}
	c := b.signedIn(t, admintoken.RoleRead, "")
	get := func(path string) *http.Response {
		t.Helper()
		resp, err := c.Get(b.srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	// One tenant's name, typed in another case and in part.
	q := url.Values{"tenant_id": {strings.ToUpper(strings.TrimPrefix(name, "t-"))}, "enabled": {"true"}}
	resp := get(console.Prefix + "/destinations?" + q.Encode())
	loc, _ := url.Parse(resp.Header.Get("Location"))
	if resp.StatusCode != http.StatusSeeOther || loc == nil || loc.Query().Get("tenant_id") != w.tenant || loc.Query().Get("enabled") != "true" {
		t.Fatalf("a name one tenant holds answers %d to %q, want a redirect with its id and the filter kept", resp.StatusCode, resp.Header.Get("Location"))
	}
	// Several tenants' names hold "t-".
	page := b.page(t, c, console.Prefix+"/dead-letters?"+url.Values{"tenant_id": {"t-"}}.Encode())
	contains(t, "the pick page", page, "<h1>Which tenant?</h1>", "names hold “t-”", `tenant_id=`+w.tenant)
	page = b.page(t, c, console.Prefix+"/events?"+url.Values{"tenant_id": {"%_"}}.Encode())
	contains(t, "the pick page of a name none holds", page, "No tenant's name holds “%_”")

	scoped := b.signedIn(t, admintoken.RoleRead, w.tenant)
	page = b.page(t, scoped, console.Prefix+"/events?"+url.Values{"tenant_id": {"t-"}}.Encode())
	if strings.Contains(page, "Which tenant?") {
		t.Errorf("a tenant-scoped session was asked which tenant")
	}
}
