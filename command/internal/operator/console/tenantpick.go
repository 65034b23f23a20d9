package console

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/google/uuid"

	"github.com/sluicehq/sluice/internal/store/tenancy"
)

// tenantPick is the page that asks an operator which tenant a name meant:
// the tenants it found (none, or several), each a link to the page asked
// for with that tenant.
type tenantPick struct {
	Name    string
	Tenants []tenancy.Tenant
	// More: the search found more than the page shows.
	More bool
	// Path is the page asked for, Query its query without tenant_id.
	Path  string
	Query url.Values
}

// pickLimit is how many tenants a search shows.
const pickLimit = 20

// namedTenant reads a GET's tenant_id that is not an id (an operator typed
// a name, in any tenant field) as a search: one tenant found, the page is
// asked again with its id; none or several, a page says which there are. It
// reports whether it answered the request.
func (c *Console) namedTenant(w http.ResponseWriter, r *http.Request, s Session) (bool, error) {
	name := strings.TrimSpace(r.URL.Query().Get("tenant_id"))
	if r.Method != http.MethodGet || s.TenantID != "" || name == "" || uuid.Validate(name) == nil {
		return false, nil
	}
	var found list[tenancy.Tenant]
	if err := c.call(r.Context(), r, s.Token, http.MethodGet, "/tenants", url.Values{"name": {name}, "limit": {"21"}}, nil, &found); err != nil {
		return true, err
	}
	q := r.URL.Query()
	q.Del("tenant_id")
	if len(found.Items) == 1 {
		q.Set("tenant_id", found.Items[0].ID)
		http.Redirect(w, r, r.URL.Path+"?"+q.Encode(), http.StatusSeeOther)
		return true, nil
	}
	d := tenantPick{Name: name, Tenants: found.Items, Path: r.URL.Path, Query: q}
	if len(d.Tenants) > pickLimit {
		d.Tenants, d.More = d.Tenants[:pickLimit], true
	}
	c.render(w, r, http.StatusOK, "tenant-pick", view{Title: "Which tenant?", Session: &s, Data: d})
	return true, nil
}
