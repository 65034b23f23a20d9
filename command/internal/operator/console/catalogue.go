package console

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/sluicehq/sluice/command/internal/operator/admin"
	"github.com/sluicehq/sluice/internal/audit"
	"github.com/sluicehq/sluice/internal/refusal"
	"github.com/sluicehq/sluice/internal/store/endpoints"
	"github.com/sluicehq/sluice/internal/store/tenancy"
)

func (c *Console) catalogueRoutes() {
	c.mux.HandleFunc("GET "+Prefix+"/sources", c.signedIn(tablePage[tenancy.Source](c, sourcesPage)))
	c.mux.HandleFunc("GET "+Prefix+"/destinations", c.signedIn(tablePage[endpoints.Endpoint](c, endpointsPage)))
	c.mux.HandleFunc("GET "+Prefix+"/deliveries", c.signedIn(tablePage[endpoints.Delivery](c, deliveriesPage)))
	c.mux.HandleFunc("GET "+Prefix+"/event-types", c.signedIn(tablePage[admin.EventType](c, eventTypesPage)))
	c.mux.HandleFunc("GET "+Prefix+"/reconciliation", c.signedIn(tablePage[admin.ReconcileRun](c, runsPage)))
	c.mux.HandleFunc("GET "+Prefix+"/audit", c.signedIn(tablePage[audit.Entry](c, auditPage)))
	c.mux.HandleFunc("POST "+Prefix+"/act", c.signedIn(c.act))
}

// tableSpec is a list page of the API's items, each page its own template
// (named as the page): which route, which filters it keeps in its URL,
// and whether it lists inside one tenant (the path names it: an operator
// picks it, a scoped token is its own).
type tableSpec struct {
	page, title, nav, api string
	filters               []string
	inTenant              bool
}

var (
	sourcesPage = tableSpec{page: "/sources", title: "Sources", nav: "sources", api: "/sources",
		filters: []string{"tenant_id", "kind", "disabled", "cursor"}}
	endpointsPage = tableSpec{page: "/destinations", title: "Destinations", nav: "destinations", api: "/tenants/{tenant}/endpoints",
		filters: []string{"enabled", "cursor"}, inTenant: true}
	deliveriesPage = tableSpec{page: "/deliveries", title: "Deliveries", nav: "destinations", api: "/deliveries",
		filters: []string{"tenant_id", "endpoint_id", "state", "event_id", "since", "until", "cursor"}}
	eventTypesPage = tableSpec{page: "/event-types", title: "Event types", nav: "sources", api: "/tenants/{tenant}/event-types",
		filters: []string{"cursor"}, inTenant: true}
	runsPage = tableSpec{page: "/reconciliation", title: "Reconciliation runs", nav: "reconciliation", api: "/reconcile/runs",
		filters: []string{"tenant_id", "source_id", "limit"}}
	auditPage = tableSpec{page: "/audit", title: "Audit log", nav: "audit", api: "/audit",
		filters: []string{"tenant_id", "action", "token_id", "outcome", "since", "until", "cursor"}}
)

// tableData is what a list page's template shows.
type tableData[T any] struct {
	Spec     tableSpec
	Items    []T
	Fields   map[string]string
	Query    url.Values
	Next     string
	TenantID string
	// NeedTenant: an operator on a page inside one tenant who named none;
	// Tenants are the first ones to pick from.
	NeedTenant bool
	Tenants    []tenancy.Tenant
}

// Page is the list's path under Prefix.
func (s tableSpec) Page() string { return s.page }

func tablePage[T any](c *Console, spec tableSpec) handler {
	return func(w http.ResponseWriter, r *http.Request, s Session) error {
		q := filters(r, spec.filters...)
		d := tableData[T]{Spec: spec, Query: q, Fields: map[string]string{}}
		for k := range q {
			d.Fields[k] = q.Get(k)
		}
		page := strings.TrimPrefix(spec.page, "/")
		path := spec.api
		if spec.inTenant {
			d.TenantID = s.TenantID
			if d.TenantID == "" {
				d.TenantID = strings.TrimSpace(r.URL.Query().Get("tenant_id"))
			}
			d.Fields["tenant_id"] = d.TenantID
			if d.TenantID == "" {
				var tenants list[tenancy.Tenant]
				if err := c.call(r.Context(), r, s.Token, http.MethodGet, "/tenants", url.Values{"limit": {"20"}}, nil, &tenants); err != nil {
					return err
				}
				d.NeedTenant, d.Tenants = true, tenants.Items
				c.render(w, r, http.StatusOK, page, view{Title: spec.title, Nav: spec.nav, Session: &s, Data: d})
				return nil
			}
			path = strings.Replace(path, "{tenant}", url.PathEscape(d.TenantID), 1)
		}
		var l list[T]
		refusal, err := refused(c.call(r.Context(), r, s.Token, http.MethodGet, path, q, nil, &l))
		if err != nil {
			return err
		}
		d.Items, d.Next = l.Items, l.NextCursor
		d.Query = cloneWithout(q, "cursor")
		if d.TenantID != "" && spec.inTenant && s.TenantID == "" {
			d.Query.Set("tenant_id", d.TenantID) // a scoped token's is implied
		}
		c.render(w, r, http.StatusOK, page, view{Title: spec.title, Nav: spec.nav, Session: &s, Error: refusal, Data: d})
		return nil
	}
}

// actForm is a row's button: a POST to /console/act naming op and the
// row's id (templates/parts.html's "act").
type actForm struct{ CSRF, Op, ID, TenantID, Label string }

// actOf is the button of op on the row id, for the page v.
func actOf(v view, op, id, tenant string) actForm {
	f := actForm{Op: op, ID: id, TenantID: tenant, Label: actions[op].label}
	if v.Session != nil {
		f.CSRF = v.Session.CSRF
	}
	return f
}

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
	"endpoint.pause":      {"Pause", "/endpoints/%s/pause", "/destinations", "endpoint-paused"},
	"endpoint.resume":     {"Resume", "/endpoints/%s/resume", "/destinations", "endpoint-resumed"},
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
