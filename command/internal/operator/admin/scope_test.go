package admin_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/danielgtaylor/huma/v2"
	"github.com/sluicehq/sluice/command/internal/operator/admin"
	"github.com/sluicehq/sluice/command/internal/operator/admintoken"
)

// documents are the routes under /admin/v1 that are not operations: the
// OpenAPI document in its forms, public on the private listener.
var documents = map[string]bool{
	"/admin/v1/openapi.json": true, "/admin/v1/openapi.yaml": true,
	"/admin/v1/openapi-3.0.json": true, "/admin/v1/openapi-3.0.yaml": true,
}

// requestBodies are valid bodies of the operations that take one; TENANT
// stands for the tenant the request aims at. A new operation with a body
// fails TestEveryRouteKeepsTenantScope until it has one here.
var requestBodies = map[string]string{
	"create-tenant":          `{"name":"walked"}`,
	"decide-conflict":        `{"outcome":"dismissed","note":"walked"}`,
	"set-tenant-limits":      `{"rate":5,"burst":10}`,
	"create-source":          `{"tenant_id":"TENANT","kind":"github","account":"acct_walk","secret":"s3cret"}`,
	"rotate-source-secret":   `{}`,
	"set-source-body-limit":  `{"max_body_bytes":2048}`,
	"create-workspace":       `{"tenant_id":"TENANT","customer":"cus_walk"}`,
	"create-api-key":         `{"tenant_id":"TENANT"}`,
	"replay-dead-letters":    `{"tenant_id":"TENANT","reason":"` + walkSetReason + `"}`,
	"rewind-consumer-group":  `{"to":"earliest"}`,
	"reconcile-source":       `{"dry_run":true}`,
	"create-admin-token":     `{"role":"read","name":"walked"}`,
	"create-event-type":      `{"source_kind":"` + walkKind + `","event_type":"` + walkType + `","schema":{"type":"object"},"resource_type":"order"}`,
	"create-endpoint":        `{"url":"https://receiver.example/walk","filters":["*"],"headers":{"Authorization":"Bearer walk"}}`,
	"update-endpoint":        `{"description":"walked","rate_per_second":5}`,
	"rotate-endpoint-secret": `{"overlap_seconds":60}`,
	"test-endpoint":          `{"event_type":"sluice.test"}`,
	"replay-deliveries":      `{"endpoint_id":"ENDPOINT","since":"2026-01-01T00:00:00Z","until":"2026-01-02T00:00:00Z"}`,
	"retry-dead-deliveries":  `{"endpoint_id":"ENDPOINT","since":"2026-01-01T00:00:00Z","until":"2026-01-02T00:00:00Z","event_type":"stripe.*","error_class":"status"}`,
	"create-portal-link":     `{"scope":"destinations","access":"manage"}`,
}

// requestQueries are the required queries of the GET operations that
// have one (ENDPOINT: the endpoint aimed at); a list without one is given
// the tenant as its filter.
var requestQueries = map[string]string{
	"count-replay-deliveries": "endpoint_id=ENDPOINT&since=2026-01-01T00:00:00Z&until=2026-01-02T00:00:00Z",
	"count-dead-deliveries":   "endpoint_id=ENDPOINT&since=2026-01-01T00:00:00Z&until=2026-01-02T00:00:00Z&event_type=stripe.*",
}

type operation struct {
	method, path, id, scope string
	hasBody                 bool
}

// operations reads the served document: every operation with its scope
// decision, keyed by method and gin path.
func (b *bundle) operations(t *testing.T) map[route]operation {
	t.Helper()
	b.load(t)
	ops := map[route]operation{}
	paths, _ := b.spec["paths"].(map[string]any)
	param := regexp.MustCompile(`\{(\w+)\}`)
	for path, item := range paths {
		for method, raw := range item.(map[string]any) {
			o, ok := raw.(map[string]any)
			if !ok {
				continue
			}
			scope, _ := o[admin.ScopeExtension].(string)
			id, _ := o["operationId"].(string)
			_, hasBody := o["requestBody"]
			ginPath := param.ReplaceAllString(path, ":$1")
			ops[route{strings.ToUpper(method), ginPath}] = operation{strings.ToUpper(method), path, id, scope, hasBody}
		}
	}
	return ops
}

// TestEveryRouteKeepsTenantScope walks every route the admin listener
// serves under /admin/v1. Each must be an operation of the document with a
// scope decision. Then, with tokens scoped to tenant A: a global route is
// 403; a tenant route aimed at tenant B (B's ids in the path, B as the
// filter or in the body) is 404 and changes nothing, and a list without a
// filter shows none of B. An unscoped operate token succeeds on every
// route, so the refusals are the scope's doing.
func TestEveryRouteKeepsTenantScope(t *testing.T) {
	t.Parallel()
	b := setup(t)
	a, other := b.newWorld(t), b.newWorld(t)
	readA := b.token(t, admintoken.RoleRead, a.tenant)
	operateA := b.token(t, admintoken.RoleOperate, a.tenant)
	root := b.token(t, admintoken.RoleOperate, "")
	ops := b.operations(t)
	walked := 0
	for _, r := range b.routes {
		if !strings.HasPrefix(r.path, admin.Prefix) || documents[r.path] {
			continue
		}
		if r.method == http.MethodHead {
			// HEAD runs its GET's operation (walked as the GET).
			if _, ok := ops[route{http.MethodGet, r.path}]; !ok {
				t.Errorf("HEAD %s is served without a GET operation", r.path)
			}
			continue
		}
		o, ok := ops[r]
		switch {
		case !ok:
			t.Errorf("%s %s is served but is no operation of the OpenAPI document", r.method, r.path)
			continue
		case o.scope != string(admin.ScopeTenant) && o.scope != string(admin.ScopeGlobal):
			t.Errorf("%s %s (%s) declares no scope decision (%s)", r.method, r.path, o.id, admin.ScopeExtension)
			continue
		}
		reqBody := ""
		if o.hasBody {
			var found bool
			if reqBody, found = requestBodies[o.id]; !found {
				t.Errorf("%s takes a body: add a valid one to requestBodies", o.id)
				continue
			}
		}
		walked++
		t.Run(o.id, func(t *testing.T) {
			scoped := operateA
			if r.method == http.MethodGet {
				scoped = readA
			}
			aimed := aim(o.path, other, reqBody)
			if q, ok := requestQueries[o.id]; ok {
				aimed.path = o.path + "?" + strings.ReplaceAll(q, "ENDPOINT", other.endpoint)
				aimed.filtered = false
			}
			if r.method == http.MethodDelete {
				aimed.path = strings.ReplaceAll(aimed.path, other.endpoint, other.doomed)
			}
			if o.scope == string(admin.ScopeGlobal) {
				status, got := b.do(t, scoped, r.method, aimed.path, aimed.body)
				if status != http.StatusForbidden {
					t.Errorf("scoped token on a global route: %d %s, want 403", status, got)
				}
			} else {
				b.refusedOtherTenant(t, scoped, r.method, aimed, a, other)
			}
			if status, got := b.do(t, root, r.method, aimed.path, aimed.body); status >= 300 {
				t.Errorf("unscoped operate token: %d %s, want 2xx", status, got)
			}
		})
	}
	if walked < 15 {
		t.Fatalf("walked %d operations: the route list was not read", walked)
	}
}

type aimedRequest struct {
	path     string
	body     any
	filtered bool // a list filtered by tenant
}

// aim fills a route's path parameters and body with w's ids, and gives a
// list without parameters w's tenant as its filter.
func aim(path string, w world, body string) aimedRequest {
	source := w.source
	if strings.HasSuffix(path, "/reconcile") { // reconciliation needs a source with an API
		source = w.apiSource
	}
	r := strings.NewReplacer("{tenant_id}", w.tenant, "{source_id}", source, "{workspace_id}", w.workspace, "{key_id}", w.apiKey,
		"{inbox_id}", w.inboxID, "{dead_letter_id}", w.deadLetter, "{conflict_id}", w.conflict, "{group}", topics.Resource("subscriptions"),
		"{source_kind}", walkKind, "{event_type}", walkType, "{token_id}", w.adminToken,
		"{endpoint_id}", w.endpoint, "{delivery_id}", w.delivery, "{link_id}", w.portalLink)
	out := aimedRequest{path: r.Replace(path)}
	if body != "" {
		out.body = strings.NewReplacer("TENANT", w.tenant, "ENDPOINT", w.endpoint).Replace(body)
	} else if !strings.Contains(path, "{") {
		out.path += "?tenant_id=" + url.QueryEscape(w.tenant)
		out.filtered = true
	}
	return out
}

// refusedOtherTenant: a scoped token aimed at the other tenant is 404 and
// leaves no trace of a change there; the same route's list without a
// filter holds none of the other tenant's ids.
func (b *bundle) refusedOtherTenant(t *testing.T, token, method string, aimed aimedRequest, own, other world) {
	t.Helper()
	before := b.fingerprint(t, other.tenant)
	status, got := b.do(t, token, method, aimed.path, aimed.body)
	if status != http.StatusNotFound {
		t.Errorf("scoped token aimed at another tenant: %d %s, want 404", status, got)
	}
	if after := b.fingerprint(t, other.tenant); after != before {
		t.Errorf("the other tenant changed: %s -> %s", before, after)
	}
	if method == http.MethodGet && aimed.filtered {
		unfiltered := aimed.path[:strings.Index(aimed.path, "?")]
		status, got := b.do(t, token, method, unfiltered, nil)
		if status != http.StatusOK {
			t.Fatalf("scoped list: %d %s", status, got)
		}
		for _, id := range []string{other.tenant, other.source, other.apiSource, other.workspace, other.apiKey, other.endpoint} {
			if strings.Contains(string(got), id) {
				t.Errorf("scoped list shows the other tenant's %s: %s", id, got)
			}
		}
		if !json.Valid(got) {
			t.Errorf("list body is not JSON: %s", got)
		}
	}
}

// fingerprint is everything an action could change in a tenant.
func (b *bundle) fingerprint(t *testing.T, tenant string) string {
	t.Helper()
	var fp string
	err := b.pool.QueryRow(t.Context(), `SELECT concat_ws('|',
  (SELECT count(*) FROM sources WHERE tenant_id = $1),
  (SELECT count(*) FROM sources WHERE tenant_id = $1 AND disabled_at IS NOT NULL),
  (SELECT string_agg(coalesce(max_body_bytes::text, '-'), ',') FROM sources WHERE tenant_id = $1),
  (SELECT count(*) FROM source_secrets ss JOIN sources s ON s.id = ss.source_id WHERE s.tenant_id = $1),
  (SELECT count(*) FROM workspaces WHERE tenant_id = $1),
  (SELECT count(*) FROM api_keys WHERE tenant_id = $1),
  (SELECT count(*) FROM api_keys WHERE tenant_id = $1 AND revoked_at IS NOT NULL),
  (SELECT coalesce(rate::text, '-') FROM tenants t LEFT JOIN tenant_limits l ON l.tenant_id = t.id WHERE t.id = $1),
  (SELECT count(*) FROM dead_letters WHERE headers->>'ce_tenantid' = $1::text AND replayed_at IS NOT NULL),
  (SELECT count(*) FROM event_types WHERE tenant_id = $1),
  (SELECT count(*) FROM event_types WHERE tenant_id = $1 AND status = 'deprecated'),
  (SELECT count(*) FROM event_type_versions v JOIN event_types e ON e.id = v.event_type_id WHERE e.tenant_id = $1),
  (SELECT count(*) FROM inbox WHERE tenant_id = $1 AND status <> 'published'),
  (SELECT count(*) FROM endpoints WHERE tenant_id = $1),
  (SELECT string_agg(concat_ws(',', e.id, e.url, e.description, e.rate_per_second, e.disabled_at, e.updated_at,
     (SELECT count(*) FROM endpoint_secrets k WHERE k.endpoint_id = e.id), (SELECT max(k.expires_at) FROM endpoint_secrets k WHERE k.endpoint_id = e.id)), ';' ORDER BY e.id)
   FROM endpoints e WHERE e.tenant_id = $1),
  (SELECT count(*) FROM deliveries WHERE tenant_id = $1 AND state = 'pending'))`, tenant).Scan(&fp)
	if err != nil {
		t.Fatal(err)
	}
	return fp
}

// A parameter confined by its parent (an event type's name inside
// tenant_id) refuses a scoped token on a route without that parent: no id
// reaches a handler unconfined.
func TestParamWithinAParentNeedsTheParent(t *testing.T) {
	t.Parallel()
	orphan := func(a *admin.API) {
		type in struct {
			Kind string `path:"source_kind"`
		}
		admin.Handle(a, admin.Route{Op: huma.Operation{OperationID: "test-orphan-kind", Method: http.MethodGet, Path: "/test/kinds/{source_kind}"},
			Scope: admin.ScopeTenant},
			func(ctx context.Context, c admin.Call, in *in) (*struct{}, error) { return &struct{}{}, nil })
	}
	b := setup(t, orphan)
	w := b.newWorld(t)
	if status, got := b.do(t, b.token(t, admintoken.RoleRead, w.tenant), http.MethodGet, "/admin/v1/test/kinds/api", nil); status != http.StatusInternalServerError {
		t.Errorf("scoped token on a route whose source_kind has no tenant_id: %d %s, want 500", status, got)
	}
}
