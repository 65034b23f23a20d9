package admin_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/command/internal/operator/admintoken"
	"github.com/sluicehq/sluice/internal/testenv"
)

// endpointView is what the endpoint routes answer, as far as these tests
// read it.
type endpointView struct {
	ID          string   `json:"id"`
	TenantID    string   `json:"tenant_id"`
	URL         string   `json:"url"`
	Description string   `json:"description"`
	Filters     []string `json:"filters"`
	Ordered     bool     `json:"ordered"`
	Rate        *int     `json:"rate_per_second"`
	Headers     []string `json:"headers"`
	Enabled     bool     `json:"enabled"`
	Reason      string   `json:"disabled_reason"`
	Secret      string   `json:"secret"`
	Figures     *struct {
		Delivered, Pending, Dead int
	} `json:"figures"`
}

// A tenant's scoped token manages its own tenant's endpoints through
// every route, and the answers never hold a header's value; the secret is
// shown by the create and the rotation only.
func TestScopedTokenManagesItsTenantsEndpoints(t *testing.T) {
	t.Parallel()
	b := setup(t)
	w := b.newWorld(t)
	tok := b.token(t, admintoken.RoleOperate, w.tenant)
	status, got, h := b.send(t, tok, http.MethodPost, "/admin/v1/tenants/"+w.tenant+"/endpoints", map[string]any{
		"url": "https://receiver.example/in", "description": "orders", "filters": []string{"hmac.order.placed", "stripe.invoice.*"},
		"ordered": false, "rate_per_second": 7, "headers": map[string]string{"Authorization": "Bearer TopSecretValue"}}, nil)
	if status != http.StatusCreated {
		t.Fatalf("create: %d %s", status, got)
	}
	e := decode[endpointView](t, got)
	if !strings.HasPrefix(e.Secret, "whsec_") || e.TenantID != w.tenant || e.Ordered || e.Rate == nil || *e.Rate != 7 ||
		strings.Join(e.Headers, ",") != "Authorization" || strings.Contains(string(got), "TopSecretValue") {
		t.Errorf("created: %s", got)
	}
	if h.Get("Location") != "/admin/v1/endpoints/"+e.ID || h.Get("Cache-Control") != "no-store" {
		t.Errorf("create: Location %q, Cache-Control %q", h.Get("Location"), h.Get("Cache-Control"))
	}
	path := "/admin/v1/endpoints/" + e.ID
	status, got = b.do(t, tok, http.MethodGet, path, nil)
	if status != http.StatusOK || strings.Contains(string(got), e.Secret) || strings.Contains(string(got), "TopSecretValue") ||
		decode[endpointView](t, got).Figures == nil {
		t.Errorf("get: %d %s, want the endpoint with its figures and no secret", status, got)
	}
	status, got = b.do(t, tok, http.MethodGet, "/admin/v1/tenants/"+w.tenant+"/endpoints?limit=1", nil)
	if status != http.StatusOK || !strings.Contains(string(got), "next_cursor") {
		t.Errorf("list of one: %d %s, want a page with a cursor (the world's endpoints and this one)", status, got)
	}
	status, got = b.do(t, tok, http.MethodPatch, path, map[string]any{"description": "", "filters": []string{"*"}, "headers": map[string]string{}})
	if p := decode[endpointView](t, got); status != http.StatusOK || p.Description != "" || strings.Join(p.Filters, ",") != "*" || len(p.Headers) != 0 {
		t.Errorf("patch: %d %s", status, got)
	}
	if status, got = b.do(t, tok, http.MethodPost, path+"/disable", nil); status != http.StatusOK || decode[endpointView](t, got).Reason != "operator" {
		t.Errorf("disable: %d %s", status, got)
	}
	if status, got = b.do(t, tok, http.MethodPost, path+"/enable", nil); status != http.StatusOK || !decode[endpointView](t, got).Enabled {
		t.Errorf("enable: %d %s", status, got)
	}
	status, got = b.do(t, tok, http.MethodPost, path+"/secret/rotate", map[string]any{"overlap_seconds": 0})
	if rotated := decode[endpointView](t, got); status != http.StatusOK || !strings.HasPrefix(rotated.Secret, "whsec_") || rotated.Secret == e.Secret {
		t.Errorf("rotate: %d %s, want a new secret", status, got)
	}
	if status, got = b.do(t, tok, http.MethodPost, path+"/test", nil); status != http.StatusOK || !strings.Contains(string(got), `"status":204`) {
		t.Errorf("test: %d %s, want the sender's attempt", status, got)
	}
	if status, got = b.do(t, tok, http.MethodDelete, path, nil); status != http.StatusNoContent {
		t.Errorf("delete: %d %s", status, got)
	}
	if status, _ = b.do(t, tok, http.MethodGet, path, nil); status != http.StatusNotFound {
		t.Errorf("get after delete: %d, want 404", status)
	}
	want := "endpoint.create,endpoint.update,endpoint.disable,endpoint.enable,endpoint.rotate_secret,endpoint.test,endpoint.delete"
	if got := b.actions(t, e.ID); got != want {
		t.Errorf("audit %s, want %s", got, want)
	}
}

// actions are the audit trail's successful actions on endpoint id, in
// order.
func (b *bundle) actions(t *testing.T, id string) string {
	t.Helper()
	var s string
	if err := b.pool.QueryRow(t.Context(), `SELECT coalesce(string_agg(action, ',' ORDER BY id), '') FROM admin_audit
WHERE resource = 'endpoint' AND target_id = $1 AND outcome = 'ok' AND token_id IS NOT NULL`, id).Scan(&s); err != nil {
		t.Fatal(err)
	}
	return s
}

// Another tenant's endpoint is, to a scoped token, an endpoint that does
// not exist: 404 on every route, and nothing of it changes.
func TestScopedTokenFindsNoOtherTenantsEndpoint(t *testing.T) {
	t.Parallel()
	b := setup(t)
	own, other := b.newWorld(t), b.newWorld(t)
	tok := b.token(t, admintoken.RoleOperate, own.tenant)
	path := "/admin/v1/endpoints/" + other.endpoint
	for _, r := range []struct {
		method, path string
		body         any
	}{
		{http.MethodGet, path, nil},
		{http.MethodPatch, path, map[string]any{"description": "mine now"}},
		{http.MethodPost, path + "/disable", nil},
		{http.MethodPost, path + "/secret/rotate", map[string]any{}},
		{http.MethodPost, path + "/test", nil},
		{http.MethodDelete, path, nil},
		{http.MethodGet, "/admin/v1/tenants/" + other.tenant + "/endpoints", nil},
		{http.MethodPost, "/admin/v1/tenants/" + other.tenant + "/endpoints", map[string]any{"url": "https://x.example/", "filters": []string{"*"}}},
	} {
		if status, got := b.do(t, tok, r.method, r.path, r.body); status != http.StatusNotFound {
			t.Errorf("%s %s: %d %s, want 404", r.method, r.path, status, got)
		}
	}
	e, err := b.ends.GetEndpoint(t.Context(), other.endpoint)
	if err != nil || e.Description != "" || !e.Enabled || e.ActiveSecrets != 1 {
		t.Errorf("the other tenant's endpoint changed: %+v %v", e, err)
	}
	if n := b.count(t, `SELECT count(*) FROM endpoints WHERE tenant_id = $1`, other.tenant); n != 2 {
		t.Errorf("the other tenant has %d endpoints, want its 2", n)
	}
	status, got := b.do(t, tok, http.MethodGet, "/admin/v1/tenants/"+own.tenant+"/endpoints", nil)
	if status != http.StatusOK || strings.Contains(string(got), other.endpoint) || !strings.Contains(string(got), own.endpoint) {
		t.Errorf("own list: %d %s", status, got)
	}
}

// A refused create never repeats a header's value, and a value the caps
// refuse is refused for a scoped token as for anyone.
func TestEndpointRefusalsRepeatNoHeaderValue(t *testing.T) {
	t.Parallel()
	b := setup(t)
	w := b.newWorld(t)
	tok := b.token(t, admintoken.RoleOperate, w.tenant)
	create := "/admin/v1/tenants/" + w.tenant + "/endpoints"
	for _, body := range []string{
		`{"url":"https://r.example/","filters":["*"],"headers":{"Webhook-Signature":"TopSecretValue"}}`,
		`{"url":"https://r.example/","filters":["*"],"headers":{"X-Key":"TopSecretValue\u0001"}}`,
		`{"url":"https://r.example/","filters":["*"],"headers":{"Bad Name":"TopSecretValue"}}`,
		`{"url":"https://u:TopSecretValue@r.example/","filters":["*"]}`,
		`{"url":"https://r.example/","filters":["*"],"rate_per_second":101,"headers":{"X-Key":"TopSecretValue"}}`,
		`{"url":"https://r.example/","filters":["*"],"concurrency":21}`,
		`{"url":"https://r.example/","filters":[]}`,
		`{"url":"ftp://r.example/","filters":["*"]}`,
	} {
		status, got := b.do(t, tok, http.MethodPost, create, body)
		if status != http.StatusUnprocessableEntity || strings.Contains(string(got), "TopSecretValue") {
			t.Errorf("create %s: %d %s, want 422 without the value", body, status, got)
		}
	}
	if n := b.count(t, `SELECT count(*) FROM endpoints WHERE tenant_id = $1`, w.tenant); n != 2 {
		t.Errorf("refused creates stored endpoints: %d, want the world's 2", n)
	}
	status, got := b.do(t, tok, http.MethodPost, "/admin/v1/endpoints/"+w.endpoint+"/secret/rotate", `{"overlap_seconds":2592001}`)
	if status != http.StatusUnprocessableEntity {
		t.Errorf("rotate with an overlap past 30 days: %d %s", status, got)
	}
}

// A create sent again under its Idempotency-Key makes nothing more and
// never shows the secret again: 409 naming the endpoint it made.
func TestEndpointCreateUnderAnIdempotencyKeyShowsItsSecretOnce(t *testing.T) {
	t.Parallel()
	b := setup(t)
	w := b.newWorld(t)
	tok := b.token(t, admintoken.RoleOperate, w.tenant)
	create := "/admin/v1/tenants/" + w.tenant + "/endpoints"
	body := map[string]any{"url": "https://receiver.example/idem", "filters": []string{"*"}}
	key := map[string]string{"Idempotency-Key": "k-" + testenv.RandomSuffix()}
	s1, first, h1 := b.send(t, tok, http.MethodPost, create, body, key)
	s2, second, h2 := b.send(t, tok, http.MethodPost, create, body, key)
	if s1 != http.StatusCreated {
		t.Fatalf("create: %d %s", s1, first)
	}
	made := decode[endpointView](t, first)
	if s2 != http.StatusConflict || !strings.Contains(string(second), "shown once") || !strings.Contains(string(second), `"resource_id":"`+made.ID+`"`) ||
		strings.Contains(string(second), made.Secret) || h2.Get("Location") != h1.Get("Location") {
		t.Errorf("create again: %d %s, want 409 naming %s without its secret", s2, second, made.ID)
	}
	if n := b.count(t, `SELECT count(*) FROM endpoints WHERE tenant_id = $1 AND url = 'https://receiver.example/idem'`, w.tenant); n != 1 {
		t.Errorf("%d endpoints made, want 1", n)
	}
	if n := b.count(t, `SELECT count(*) FROM admin_idempotency_keys WHERE position('whsec_' in convert_from(coalesce(body, ''), 'UTF8')) > 0`); n != 0 {
		t.Errorf("%d kept answers hold a signing secret", n)
	}
}

// The document states this deployment's caps as the bounds of rate and
// concurrency.
func TestEndpointDocumentStatesTheCaps(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.load(t)
	schemas := b.spec["components"].(map[string]any)["schemas"].(map[string]any)
	for _, name := range []string{"NewEndpointBody", "EndpointPatchBody"} {
		props := schemas[name].(map[string]any)["properties"].(map[string]any)
		rate, conc := props["rate_per_second"].(map[string]any), props["concurrency"].(map[string]any)
		if rate["maximum"] != float64(100) || conc["maximum"] != float64(20) {
			t.Errorf("%s: rate maximum %v, concurrency maximum %v, want the caps 100 and 20", name, rate["maximum"], conc["maximum"])
		}
	}
}

// A filter expression is checked when it is set: one that does not compile
// or yields no bool is a 422 naming the field and, in CEL's words, where
// and why, and stores nothing; a valid one is shown, replaced and removed.
// Pause and resume are the tenant's, and audited.
func TestEndpointExpressionIsCheckedAndPauseResumes(t *testing.T) {
	t.Parallel()
	b := setup(t)
	w := b.newWorld(t)
	tok := b.token(t, admintoken.RoleOperate, w.tenant)
	create := "/admin/v1/tenants/" + w.tenant + "/endpoints"
	for expr, want := range map[string]string{
		`data.object.amount_paid >`:              "Syntax error",
		`amount > 1`:                             "undeclared reference to 'amount'",
		`data.object.amount_paid`:                "",
		`1 + 1`:                                  "yields int, not a bool",
		`subject.startsWith(1)`:                  "no matching overload",
		strings.Repeat("true && ", 300) + "true": "length <= 2048",
	} {
		status, got := b.do(t, tok, http.MethodPost, create, map[string]any{"url": "https://r.example/", "filters": []string{"*"}, "expression": expr})
		if want == "" {
			// Dyn: only the event decides; accepted.
			if status != http.StatusCreated {
				t.Errorf("create with %q: %d %s, want 201", expr, status, got)
			}
			continue
		}
		if status != http.StatusUnprocessableEntity || !strings.Contains(string(got), want) || !strings.Contains(string(got), "expression") {
			t.Errorf("create with %.40q: %d %s, want 422 naming expression and saying %q", expr, status, got, want)
		}
	}
	expr := `data.object.amount_paid > 10000 && subject.startsWith("in_")`
	status, got := b.do(t, tok, http.MethodPost, create, map[string]any{"url": "https://r.example/", "filters": []string{"stripe.*"}, "expression": expr})
	if status != http.StatusCreated || !strings.Contains(string(got), `"expression":"data.object.amount_paid \u003e 10000`) &&
		!strings.Contains(string(got), `"expression":"data.object.amount_paid > 10000`) {
		t.Fatalf("create: %d %s", status, got)
	}
	path := "/admin/v1/endpoints/" + decode[endpointView](t, got).ID
	if status, got = b.do(t, tok, http.MethodPatch, path, map[string]any{"expression": "type =="}); status != http.StatusUnprocessableEntity {
		t.Errorf("patch with a broken expression: %d %s, want 422", status, got)
	}
	if status, got = b.do(t, tok, http.MethodPatch, path, map[string]any{"expression": ""}); status != http.StatusOK || strings.Contains(string(got), `"expression"`) {
		t.Errorf("patch removing the expression: %d %s", status, got)
	}
	if status, got = b.do(t, tok, http.MethodPost, path+"/pause", nil); status != http.StatusOK || !strings.Contains(string(got), `"paused":true`) {
		t.Errorf("pause: %d %s", status, got)
	}
	if status, got = b.do(t, tok, http.MethodPost, path+"/resume", nil); status != http.StatusOK || !strings.Contains(string(got), `"paused":false`) {
		t.Errorf("resume: %d %s", status, got)
	}
	id := strings.TrimPrefix(path, "/admin/v1/endpoints/")
	if got, want := b.actions(t, id), "endpoint.create,endpoint.update,endpoint.pause,endpoint.resume"; got != want {
		t.Errorf("audit %s, want %s", got, want)
	}
}

// A rabbitmq or sqs endpoint is made through the API with its settings
// and credentials: the answer (checked against the document) shows the
// kind, the settings and has_credentials, never the password or secret
// key; a kind the document does not list is refused before the store, a
// kind's missing setting is a 422 naming it.
func TestEndpointOfAnotherKindShowsItsSettingsNeverItsPassword(t *testing.T) {
	t.Parallel()
	b := setup(t)
	w := b.newWorld(t)
	tok := b.token(t, admintoken.RoleOperate, w.tenant)
	create := "/admin/v1/tenants/" + w.tenant + "/endpoints"
	status, got := b.do(t, tok, http.MethodPost, create, map[string]any{"url": "amqps://mq.example/orders", "filters": []string{"*"},
		"kind": "rabbitmq", "settings": map[string]any{"exchange": "events", "routing_key": "orders"},
		"credentials": map[string]any{"username": "orders", "password": "never-shown"}})
	if status != http.StatusCreated || !strings.Contains(string(got), `"kind":"rabbitmq"`) || !strings.Contains(string(got), `"routing_key":"orders"`) ||
		!strings.Contains(string(got), `"has_credentials":true`) || strings.Contains(string(got), "never-shown") {
		t.Fatalf("create: %d %s; want 201 with kind, settings and has_credentials, no password", status, got)
	}
	if status, got := b.do(t, tok, http.MethodPost, create, map[string]any{"url": "https://r.example/", "filters": []string{"*"}, "kind": "sns"}); status != http.StatusUnprocessableEntity {
		t.Errorf("create of kind sns: %d %s, want 422", status, got)
	}
	queue := "https://sqs.eu-west-1.amazonaws.com/123456789012/orders.fifo"
	status, got = b.do(t, tok, http.MethodPost, create, map[string]any{"url": queue, "filters": []string{"*"}, "kind": "sqs",
		"settings": map[string]any{"region": "eu-west-1"}, "credentials": map[string]any{"username": "AKIDORDERS", "password": "never-shown"}})
	if status != http.StatusCreated || !strings.Contains(string(got), `"kind":"sqs"`) || !strings.Contains(string(got), `"region":"eu-west-1"`) ||
		!strings.Contains(string(got), `"has_credentials":true`) || strings.Contains(string(got), "never-shown") {
		t.Errorf("create of an sqs endpoint: %d %s; want 201 with kind, region and has_credentials, no secret", status, got)
	}
	if status, got := b.do(t, tok, http.MethodPost, create, map[string]any{"url": queue, "filters": []string{"*"}, "kind": "sqs",
		"credentials": map[string]any{"username": "AKIDORDERS", "password": "s"}}); status != http.StatusUnprocessableEntity || !strings.Contains(string(got), "settings.region") {
		t.Errorf("create of an sqs endpoint without a region: %d %s, want 422 naming it", status, got)
	}
	if status, got := b.do(t, tok, http.MethodPost, create, map[string]any{"url": "amqps://mq.example/", "filters": []string{"*"}, "kind": "rabbitmq"}); status != http.StatusUnprocessableEntity || !strings.Contains(string(got), "routing_key") {
		t.Errorf("create of a rabbitmq endpoint without a routing key: %d %s, want 422 naming it", status, got)
	}
}
