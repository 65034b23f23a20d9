package console

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/sluicehq/sluice/internal/refusal"
)

func (c *Console) catalogueRoutes() {
	c.mux.HandleFunc("GET "+Prefix+"/sources", c.signedIn(c.tablePage(sourcesPage)))
	c.mux.HandleFunc("GET "+Prefix+"/destinations", c.signedIn(c.tablePage(endpointsPage)))
	c.mux.HandleFunc("GET "+Prefix+"/deliveries", c.signedIn(c.tablePage(deliveriesPage)))
	c.mux.HandleFunc("GET "+Prefix+"/event-types", c.signedIn(c.tablePage(eventTypesPage)))
	c.mux.HandleFunc("GET "+Prefix+"/reconciliation", c.signedIn(c.tablePage(runsPage)))
	c.mux.HandleFunc("GET "+Prefix+"/audit", c.signedIn(c.tablePage(auditPage)))
	c.mux.HandleFunc("POST "+Prefix+"/act", c.signedIn(c.act))
}

// tableSpec is a list page shown as a table of the API's items: which
// route, which filters it keeps in its URL, whether it lists inside one
// tenant (the path names it: an operator picks it, a scoped token is its
// own), and the actions each row offers.
type tableSpec struct {
	page, title, nav, api string
	filters               []string
	inTenant              bool
	// id is the field naming a row; actions are offered on each row.
	id      string
	actions []string
}

var (
	sourcesPage = tableSpec{page: "/sources", title: "Sources", nav: "sources", api: "/sources",
		filters: []string{"tenant_id", "kind", "disabled", "cursor"}, id: "id", actions: []string{"source.disable", "source.enable"}}
	endpointsPage = tableSpec{page: "/destinations", title: "Destinations", nav: "destinations", api: "/tenants/{tenant}/endpoints",
		filters: []string{"enabled", "cursor"}, inTenant: true, id: "id", actions: []string{"endpoint.disable", "endpoint.enable"}}
	deliveriesPage = tableSpec{page: "/deliveries", title: "Deliveries", nav: "destinations", api: "/deliveries",
		filters: []string{"tenant_id", "endpoint_id", "state", "event_id", "since", "until", "cursor"}, id: "id", actions: []string{"delivery.retry"}}
	eventTypesPage = tableSpec{page: "/event-types", title: "Event types", nav: "sources", api: "/tenants/{tenant}/event-types",
		filters: []string{"cursor"}, inTenant: true, id: "tenant_id/source_kind/event_type", actions: []string{"eventtype.release", "eventtype.deprecate"}}
	runsPage = tableSpec{page: "/reconciliation", title: "Reconciliation runs", nav: "reconciliation", api: "/reconcile/runs",
		filters: []string{"tenant_id", "source_id", "limit"}}
	auditPage = tableSpec{page: "/audit", title: "Audit log", nav: "audit", api: "/audit",
		filters: []string{"tenant_id", "action", "token_id", "outcome", "since", "until", "cursor"}}
)

// tableData is what table.html shows.
type tableData struct {
	Spec     tableSpec
	Table    table
	IDs      []string
	Actions  []action
	Fields   map[string]string
	Query    url.Values
	Next     string
	TenantID string
	// NeedTenant: an operator on a page inside one tenant who named none.
	NeedTenant bool
}

func (s tableSpec) Page() string      { return s.page }
func (s tableSpec) Filters() []string { return s.filters }
func (s tableSpec) InTenant() bool    { return s.inTenant }

// RowLinks reports whether each row links to pages of its own (a
// delivery's requests, an endpoint's replay, a type's versions, a
// source's reconciliation), for any role.
func (s tableSpec) RowLinks() bool {
	return s.page == "/deliveries" || s.page == "/destinations" || s.page == "/event-types" || s.page == "/sources"
}

func (c *Console) tablePage(spec tableSpec) handler {
	return func(w http.ResponseWriter, r *http.Request, s Session) error {
		q := filters(r, spec.filters...)
		d := tableData{Spec: spec, Query: q, Fields: map[string]string{}}
		for k := range q {
			d.Fields[k] = q.Get(k)
		}
		path := spec.api
		if spec.inTenant {
			d.TenantID = s.TenantID
			if d.TenantID == "" {
				d.TenantID = strings.TrimSpace(r.URL.Query().Get("tenant_id"))
			}
			d.Fields["tenant_id"] = d.TenantID
			if d.TenantID == "" {
				d.NeedTenant = true
				c.render(w, r, http.StatusOK, "table", view{Title: spec.title, Nav: spec.nav, Session: &s, Data: d})
				return nil
			}
			path = strings.Replace(path, "{tenant}", url.PathEscape(d.TenantID), 1)
		}
		var l struct {
			Items      json.RawMessage `json:"items"`
			NextCursor string          `json:"next_cursor"`
		}
		refusal, err := refused(c.call(r.Context(), r, s.Token, http.MethodGet, path, q, nil, &l))
		if err != nil {
			return err
		}
		d.Table, d.Next = asTable(l.Items), l.NextCursor
		if spec.id != "" {
			d.IDs = idsOf(d.Table, strings.Split(spec.id, "/"))
		}
		if s.Role == "operate" {
			for _, a := range spec.actions {
				d.Actions = append(d.Actions, action{Op: a, Label: actions[a].label})
			}
		}
		d.Query = cloneWithout(q, "cursor")
		if d.TenantID != "" && spec.inTenant {
			d.Query.Set("tenant_id", d.TenantID)
		}
		c.render(w, r, http.StatusOK, "table", view{Title: spec.title, Nav: spec.nav, Session: &s, Error: refusal, Data: d})
		return nil
	}
}

// idsOf names each row by the values of the named columns, joined by
// "/" (an event type is its tenant, kind and name).
func idsOf(t table, names []string) []string {
	var cols []int
	for _, name := range names {
		for i, col := range t.Columns {
			if col == name {
				cols = append(cols, i)
			}
		}
	}
	if len(cols) != len(names) {
		return nil
	}
	ids := make([]string, len(t.Rows))
	for j, row := range t.Rows {
		parts := make([]string, len(cols))
		for k, i := range cols {
			parts[k] = row[i]
		}
		ids[j] = strings.Join(parts, "/")
	}
	return ids
}

// action is a button of a row: a POST to /console/act naming op.
type action struct{ Op, Label string }

// actionSpec is what an op does: a POST to the API path (%s: the row's
// id), then back to a page with a notice.
type actionSpec struct {
	label, path, back, notice string
}

// actions are the only API calls /console/act makes: a form names one
// and an id, never a path.
var actions = map[string]actionSpec{
	"source.disable":      {"Disable", "/sources/%s/disable", "/sources", "source-disabled"},
	"source.enable":       {"Enable", "/sources/%s/enable", "/sources", "source-enabled"},
	"endpoint.disable":    {"Disable", "/endpoints/%s/disable", "/destinations", "endpoint-disabled"},
	"endpoint.enable":     {"Enable", "/endpoints/%s/enable", "/destinations", "endpoint-enabled"},
	"delivery.retry":      {"Retry now", "/deliveries/%s/retry", "/deliveries", "delivery-retried"},
	"eventtype.release":   {"Release held events", "/tenants/%s/event-types/%s/%s/release", "/event-types", "released"},
	"eventtype.deprecate": {"Deprecate", "/tenants/%s/event-types/%s/%s/deprecate", "/event-types", "deprecated"},
}

func (c *Console) act(w http.ResponseWriter, r *http.Request, s Session) error {
	spec, ok := actions[r.PostFormValue("op")]
	if !ok {
		return refusal.New(refusal.NotFound, "no such action")
	}
	// The id's segments fill the path's, each escaped: a form can name
	// ids, never another path.
	var segs []any
	for _, seg := range strings.Split(r.PostFormValue("id"), "/") {
		segs = append(segs, url.PathEscape(seg))
	}
	if len(segs) != strings.Count(spec.path, "%s") {
		return refusal.New(refusal.NotFound, "no such %s target", r.PostFormValue("op"))
	}
	if err := c.call(r.Context(), r, s.Token, http.MethodPost, fmt.Sprintf(spec.path, segs...), nil, struct{}{}, nil); err != nil {
		return err
	}
	q := url.Values{}
	if t := r.PostFormValue("tenant_id"); t != "" {
		q.Set("tenant_id", t)
	}
	redirect(w, r, spec.back, spec.notice, q)
	return nil
}
