package admin_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/command/internal/operator/admintoken"
	"github.com/sluicehq/sluice/command/internal/operator/input"
)

// refusal is a request the edge must refuse with 422 before anything
// reaches the database.
type refusal struct {
	method, path string
	body         any
	// names is what the problem must name (a field's location).
	names string
}

func (b *bundle) wantRefused(t *testing.T, token string, cases []refusal) {
	t.Helper()
	for _, c := range cases {
		status, got := b.do(t, token, c.method, c.path, c.body)
		if status != http.StatusUnprocessableEntity || !strings.Contains(string(got), c.names) {
			t.Errorf("%s %s %v: %d %s, want 422 naming %q", c.method, c.path, c.body, status, got, c.names)
		}
	}
}

// A NUL byte, a control character or bytes that are no UTF-8 in any text
// parameter or field is a 422 naming the field, never a 500 from the
// database; nothing is stored.
func TestTextWithNULOrControlCharactersIsRefused(t *testing.T) {
	t.Parallel()
	b := setup(t)
	w := b.newWorld(t)
	read := b.token(t, admintoken.RoleRead, "")
	root := b.token(t, admintoken.RoleOperate, "")
	scopedRead := b.token(t, admintoken.RoleRead, w.tenant)
	nul, esc, bad := url.QueryEscape("a\x00b"), url.QueryEscape("a\x1b[2Jb"), "a%FFb"
	queries := []refusal{
		{http.MethodGet, "/admin/v1/events?event_id=" + nul, nil, "query.event_id"},
		{http.MethodGet, "/admin/v1/events?object_id=" + nul, nil, "query.object_id"},
		{http.MethodGet, "/admin/v1/events?event_type=" + esc, nil, "query.event_type"},
		{http.MethodGet, "/admin/v1/events?event_id=" + bad, nil, "query.event_id"},
		{http.MethodGet, "/admin/v1/dead-letters?group=" + nul, nil, "query.group"},
		{http.MethodGet, "/admin/v1/dead-letters?reason=" + nul, nil, "query.reason"},
		{http.MethodGet, "/admin/v1/dead-letters?reason=" + bad, nil, "query.reason"},
		{http.MethodGet, "/admin/v1/workspaces?customer=" + nul, nil, "query.customer"},
		{http.MethodGet, "/admin/v1/sources?kind=" + nul, nil, "query.kind"},
		{http.MethodGet, "/admin/v1/tenants?cursor=" + nul, nil, "query.cursor"},
		{http.MethodGet, "/admin/v1/consumer-groups/a" + bad, nil, "path.group"},
	}
	b.wantRefused(t, read, queries)
	b.wantRefused(t, scopedRead, queries[:9])
	b.wantRefused(t, root, []refusal{
		{http.MethodPost, "/admin/v1/tenants", map[string]any{"name": "a\x00b"}, "body.name"},
		{http.MethodPost, "/admin/v1/tenants", map[string]any{"name": "a\x1b[31mred"}, "body.name"},
		{http.MethodPost, "/admin/v1/tenants", map[string]any{"name": strings.Repeat("n", 201)}, "body.name"},
		{http.MethodPost, "/admin/v1/workspaces", map[string]any{"tenant_id": w.tenant, "customer": "cus_\x00", "name": "w"}, "body.customer"},
		{http.MethodPost, "/admin/v1/workspaces", map[string]any{"tenant_id": w.tenant, "customer": "cus_1", "name": "w\x00"}, "body.name"},
		{http.MethodPost, "/admin/v1/sources", map[string]any{"tenant_id": w.tenant, "kind": "github", "account": "a\x00", "secret": "s"}, "body.account"},
		{http.MethodPost, "/admin/v1/sources", map[string]any{"tenant_id": w.tenant, "kind": "hmac", "account": "a", "secret": "s",
			"settings": map[string]any{"header": "X-\x00"}}, "body.settings"},
		{http.MethodPost, "/admin/v1/dead-letters/replay", map[string]any{"reason": "x\x00"}, "body.reason"},
		{http.MethodPost, "/admin/v1/tenants/" + w.tenant + "/event-types", map[string]any{"source_kind": "api", "event_type": "nul.type",
			"resource_type": "order", "schema": map[string]any{"type": "object", "description": "a\x00b"}}, "body.schema"},
	})
	if n := b.count(t, `SELECT count(*) FROM tenants WHERE name = $1 OR name = $2`, "a\x1b[31mred", strings.Repeat("n", 201)); n != 0 {
		t.Errorf("a refused tenant was stored (%d)", n)
	}
	if n := b.count(t, `SELECT count(*) FROM workspaces WHERE tenant_id = $1`, w.tenant); n != 1 {
		t.Errorf("workspaces of the tenant: %d, want the world's one", n)
	}
	// A body that is no UTF-8 is refused as a body.
	if status, got := b.do(t, root, http.MethodPost, "/admin/v1/tenants", "{\"name\":\"a\xffb\"}"); status != http.StatusBadRequest {
		t.Errorf("a body that is no UTF-8: %d %s, want 400", status, got)
	}
}

// uuids are canonical lowercase: urn:uuid:, braces, bare hex and upper
// case are 422 on every route and filter, scoped or not; a malformed id of
// any kind is 422, a well-formed unknown one 404.
func TestIDsAreCanonicalOrRefused(t *testing.T) {
	t.Parallel()
	b := setup(t)
	w := b.newWorld(t)
	root := b.token(t, admintoken.RoleOperate, "")
	scoped := b.token(t, admintoken.RoleOperate, w.tenant)
	spellings := func(id string) []string {
		return []string{"urn:uuid:" + id, "{" + id + "}", strings.ReplaceAll(id, "-", ""), strings.ToUpper(id)}
	}
	var cases []refusal
	for _, id := range spellings(w.tenant) {
		cases = append(cases,
			refusal{http.MethodGet, "/admin/v1/tenants/" + url.PathEscape(id), nil, "path.tenant_id"},
			refusal{http.MethodGet, "/admin/v1/tenants/" + url.PathEscape(id) + "/event-types", nil, "path.tenant_id"},
			refusal{http.MethodGet, "/admin/v1/sources?tenant_id=" + url.QueryEscape(id), nil, "query.tenant_id"},
			refusal{http.MethodGet, "/admin/v1/events?tenant_id=" + url.QueryEscape(id), nil, "query.tenant_id"},
			refusal{http.MethodPost, "/admin/v1/workspaces", map[string]any{"tenant_id": id, "customer": "cus_spelt"}, "body.tenant_id"},
		)
	}
	for _, id := range spellings(w.source) {
		cases = append(cases,
			refusal{http.MethodGet, "/admin/v1/sources/" + url.PathEscape(id), nil, "path.source_id"},
			refusal{http.MethodGet, "/admin/v1/events?source_id=" + url.QueryEscape(id), nil, "query.source_id"},
		)
	}
	for _, id := range spellings(w.workspace) {
		cases = append(cases, refusal{http.MethodGet, "/admin/v1/workspaces/" + url.PathEscape(id), nil, "path.workspace_id"})
	}
	for _, id := range spellings(w.apiKey) {
		cases = append(cases, refusal{http.MethodPost, "/admin/v1/api-keys/" + url.PathEscape(id) + "/revoke", nil, "path.key_id"})
	}
	cases = append(cases,
		refusal{http.MethodGet, "/admin/v1/tenants/x", nil, "path.tenant_id"},
		refusal{http.MethodGet, "/admin/v1/tenants/x/event-types", nil, "path.tenant_id"},
		refusal{http.MethodGet, "/admin/v1/sources/not-an-id", nil, "path.source_id"},
		refusal{http.MethodGet, "/admin/v1/events/x", nil, "path.inbox_id"},
		refusal{http.MethodGet, "/admin/v1/events/0", nil, "path.inbox_id"},
		refusal{http.MethodGet, "/admin/v1/events/-3/payload", nil, "path.inbox_id"},
		refusal{http.MethodGet, "/admin/v1/dead-letters/x", nil, "path.dead_letter_id"},
		refusal{http.MethodPost, "/admin/v1/dead-letters/1e3/replay", nil, "path.dead_letter_id"},
		refusal{http.MethodGet, "/admin/v1/conflicts/x", nil, "path.conflict_id"},
		refusal{http.MethodGet, "/admin/v1/sources?tenant_id=garbage", nil, "query.tenant_id"},
	)
	b.wantRefused(t, root, cases)
	b.wantRefused(t, scoped, cases)
	if n := b.count(t, `SELECT count(*) FROM api_keys WHERE id = $1 AND revoked_at IS NOT NULL`, w.apiKey); n != 0 {
		t.Error("a refused revoke revoked the key")
	}
	unknown := "5b2e1d4c-0000-4000-8000-000000000000"
	for _, path := range []string{"/admin/v1/tenants/" + unknown, "/admin/v1/tenants/" + unknown + "/event-types", "/admin/v1/sources/" + unknown,
		"/admin/v1/workspaces/" + unknown, "/admin/v1/events/999999999", "/admin/v1/dead-letters/999999999", "/admin/v1/conflicts/999999999.1"} {
		for name, tok := range map[string]string{"unscoped": root, "scoped": scoped} {
			if status, got := b.do(t, tok, http.MethodGet, path, nil); status != http.StatusNotFound {
				t.Errorf("%s GET %s: %d %s, want 404", name, path, status, got)
			}
		}
	}
}

// Numbers have bounds in the document and are refused by them, with the
// bound named, before the database: nothing is stored, no default applies
// silently, and no Go or database text reaches the caller.
func TestNumbersOutOfRangeAreRefusedByTheirBounds(t *testing.T) {
	t.Parallel()
	b := setup(t)
	w := b.newWorld(t)
	root := b.token(t, admintoken.RoleOperate, "")
	newSource := func(extra map[string]any) map[string]any {
		s := map[string]any{"tenant_id": w.tenant, "kind": "stripe", "account": "acct_num", "secret": "whsec_num"}
		for k, v := range extra {
			s[k] = v
		}
		return s
	}
	limits := "/admin/v1/tenants/" + w.tenant + "/limits"
	rotate := "/admin/v1/sources/" + w.source + "/rotate-secret"
	for _, c := range []struct {
		method, path string
		body         string
		names        string
	}{
		{http.MethodPost, "/admin/v1/sources", mustJSON(newSource(map[string]any{"tolerance_seconds": 2147483648})), "body.tolerance_seconds"},
		{http.MethodPost, "/admin/v1/sources", mustJSON(newSource(map[string]any{"tolerance_seconds": 9223372036854})), "body.tolerance_seconds"},
		{http.MethodPost, "/admin/v1/sources", mustJSON(newSource(map[string]any{"tolerance_seconds": 0})), "body.tolerance_seconds"},
		{http.MethodPost, "/admin/v1/sources", mustJSON(newSource(map[string]any{"max_body_bytes": 26214401})), "body.max_body_bytes"},
		{http.MethodPut, limits, `{"rate":5,"burst":9223372036854775807}`, "body.burst"},
		{http.MethodPut, limits, `{"rate":5,"burst":10.5}`, "body.burst"},
		{http.MethodPut, limits, `{"rate":1e300,"burst":10}`, "body.rate"},
		{http.MethodPut, limits, `{"rate":0,"burst":10}`, "body.rate"},
		{http.MethodPost, rotate, `{"overlap_seconds":9223372036854775807}`, "body.overlap_seconds"},
		{http.MethodPost, rotate, `{"overlap_seconds":-1}`, "body.overlap_seconds"},
		{http.MethodGet, "/admin/v1/tenants?limit=0", "", "query.limit"},
		{http.MethodGet, "/admin/v1/tenants?limit=501", "", "query.limit"},
		{http.MethodGet, "/admin/v1/reconcile/runs?limit=9223372036854775808", "", "query.limit"},
	} {
		var body any
		if c.body != "" {
			body = c.body
		}
		status, got := b.do(t, root, c.method, c.path, body)
		if status != http.StatusUnprocessableEntity || !strings.Contains(string(got), c.names) ||
			strings.Contains(string(got), "json:") || strings.Contains(string(got), "Go struct") {
			t.Errorf("%s %s %s: %d %s, want 422 naming %s in words", c.method, c.path, c.body, status, got, c.names)
		}
	}
	if n := b.count(t, `SELECT count(*) FROM sources WHERE account = 'acct_num'`); n != 0 {
		t.Errorf("a refused source was stored (%d)", n)
	}
	if n := b.count(t, `SELECT count(*) FROM tenant_limits WHERE tenant_id = $1`, w.tenant); n != 0 {
		t.Errorf("refused limits were stored")
	}
	if n := b.count(t, `SELECT count(*) FROM source_secrets WHERE source_id = $1`, w.source); n != 1 {
		t.Errorf("a refused rotation added a secret (%d secrets)", n)
	}
	// A whole number written with a fraction is the integer it is (JSON
	// Schema's integer), not Go's refusal.
	if status, got := b.do(t, root, http.MethodPut, limits, `{"rate":5,"burst":10.0}`); status != http.StatusOK ||
		b.count(t, `SELECT burst FROM tenant_limits WHERE tenant_id = $1`, w.tenant) != 10 {
		t.Errorf("burst 10.0: %d %s, want it taken as 10", status, got)
	}
	name := `v10.0 "1e3" \u00e9 -2.0`
	if status, got := b.do(t, root, http.MethodPost, "/admin/v1/tenants", map[string]any{"name": name}); status != http.StatusCreated ||
		decode[struct{ Name string }](t, got).Name != name {
		t.Errorf("a name holding numbers: %d %s, want it kept as sent", status, got)
	}
	// The bounds are in the document.
	b.load(t)
	doc := mustJSON(b.spec)
	for _, want := range []string{`"maximum":86400`, `"maximum":1000000`, `"maximum":2592000`} {
		if !strings.Contains(doc, want) {
			t.Errorf("the document states no %s", want)
		}
	}
}

// A refusal never repeats a submitted secret: not in errors[].value, not
// in the detail, whether the body is invalid, malformed or out of range.
func TestRefusalsNeverEchoASubmittedSecret(t *testing.T) {
	t.Parallel()
	b := setup(t)
	w := b.newWorld(t)
	root := b.token(t, admintoken.RoleOperate, "")
	const secret = "whsec_DoNotRepeatMe0123456789"
	for _, body := range []string{
		`{"tenant_id":"` + w.tenant + `","kind":"stripe","account":"acct_\u0000","secret":"` + secret + `"}`,
		`{"tenant_id":"` + w.tenant + `","kind":"stripe","account":"acct_s","secret":"` + secret + `\u0000"}`,
		`{"tenant_id":"` + w.tenant + `","kind":"stripe","account":"acct_s","secret":"` + secret + `","tolerance_seconds":"x"}`,
		`{"tenant_id":"` + w.tenant + `","kind":"stripe","account":"acct_s","secret":"` + secret + `",`,
		`{"tenant_id":"` + w.tenant + `","kind":"stripe","account":"acct_s","secret":"` + secret + `","max_body_bytes":1.5}`,
	} {
		status, got := b.do(t, root, http.MethodPost, "/admin/v1/sources", body)
		if status < 400 || status >= 500 || strings.Contains(string(got), "DoNotRepeatMe") {
			t.Errorf("body %s: %d %s, want a refusal without the secret", body, status, got)
		}
	}
	rotate := "/admin/v1/sources/" + w.source + "/rotate-secret"
	if status, got := b.do(t, root, http.MethodPost, rotate, `{"secret":"`+secret+`","overlap_seconds":-5}`); status != 422 || strings.Contains(string(got), "DoNotRepeatMe") {
		t.Errorf("rotate: %d %s, want 422 without the secret", status, got)
	}
}

// Where a value is required an empty one is refused, not taken for an
// absent one: an empty query parameter, a null or empty field.
func TestEmptyValuesAreRefusedWhereAValueIsMeant(t *testing.T) {
	t.Parallel()
	b := setup(t)
	w := b.newWorld(t)
	root := b.token(t, admintoken.RoleOperate, "")
	b.wantRefused(t, root, []refusal{
		{http.MethodGet, "/admin/v1/events?tenant_id=" + w.tenant + "&until=", nil, "query.until"},
		{http.MethodGet, "/admin/v1/sources?disabled=", nil, "query.disabled"},
		{http.MethodGet, "/admin/v1/sources?kind=", nil, "query.kind"},
		{http.MethodGet, "/admin/v1/dead-letters?reason=", nil, "query.reason"},
		{http.MethodPost, "/admin/v1/dead-letters/replay", map[string]any{"reason": nil}, "body.reason"},
		{http.MethodPost, "/admin/v1/dead-letters/replay", map[string]any{"reason": ""}, "body.reason"},
		{http.MethodPost, "/admin/v1/dead-letters/replay", map[string]any{"tenant_id": ""}, "body.tenant_id"},
		{http.MethodPost, "/admin/v1/tenants", map[string]any{"name": ""}, "body.name"},
		{http.MethodPost, "/admin/v1/workspaces", map[string]any{"tenant_id": w.tenant, "customer": ""}, "body.customer"},
		{http.MethodPost, "/admin/v1/api-keys", map[string]any{}, "tenant_id"},
		// Only spaces is no value either.
		{http.MethodPost, "/admin/v1/tenants", map[string]any{"name": "   "}, "body.name"},
		{http.MethodPost, "/admin/v1/tenants", map[string]any{"name": " \u00a0"}, "body.name"},
		{http.MethodPost, "/admin/v1/workspaces", map[string]any{"tenant_id": w.tenant, "customer": " "}, "body.customer"},
		{http.MethodPost, "/admin/v1/workspaces", map[string]any{"tenant_id": w.tenant, "customer": "cus_1", "name": "  "}, "body.name"},
		{http.MethodPost, "/admin/v1/sources", map[string]any{"tenant_id": w.tenant, "kind": "github", "account": "  ", "secret": "s3cret"}, "body.account"},
		{http.MethodPost, "/admin/v1/admin-tokens", map[string]any{"role": "read", "name": " "}, "body.name"},
	})
	if n := b.count(t, `SELECT count(*) FROM tenants WHERE btrim(name) = ''`); n != 0 {
		t.Errorf("%d tenants named by spaces only were made", n)
	}
}

func mustJSON(v any) string {
	raw, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(raw)
}

// The document states the input rules on everything an operation reads:
// each text a pattern and a maxLength, each uuid its format and the
// canonical pattern, each number its bounds. A field added without them
// fails here.
func TestTheDocumentStatesTheInputRules(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.load(t)
	components, _ := b.spec["components"].(map[string]any)
	schemas, _ := components["schemas"].(map[string]any)
	var check func(where string, s map[string]any, seen map[string]bool)
	check = func(where string, s map[string]any, seen map[string]bool) {
		if ref, ok := s["$ref"].(string); ok {
			name := strings.TrimPrefix(ref, "#/components/schemas/")
			if seen[name] {
				return
			}
			seen[name] = true
			target, _ := schemas[name].(map[string]any)
			check(where, target, seen)
			return
		}
		switch s["type"] {
		case "string":
			_, enum := s["enum"]
			format, _ := s["format"].(string)
			pattern, _ := s["pattern"].(string)
			switch {
			case enum || format == "date-time":
			case format == "uuid" && pattern != input.UUIDPattern:
				t.Errorf("%s: a uuid without the canonical pattern (%q)", where, pattern)
			case format == "" && (pattern == "" || s["maxLength"] == nil):
				t.Errorf("%s: text without a pattern and a maxLength: %v", where, s)
			}
		case "integer", "number":
			// An int64 (an id, an offset) is bounded above by its format.
			if s["minimum"] == nil && s["exclusiveMinimum"] == nil || s["maximum"] == nil && s["format"] != "int64" {
				t.Errorf("%s: a number without its bounds: %v", where, s)
			}
		case "array":
			if items, ok := s["items"].(map[string]any); ok {
				check(where+"[]", items, seen)
			}
		}
		props, _ := s["properties"].(map[string]any)
		for name, p := range props {
			check(where+"."+name, p.(map[string]any), seen)
		}
	}
	paths, _ := b.spec["paths"].(map[string]any)
	for path, item := range paths {
		for method, raw := range item.(map[string]any) {
			o, ok := raw.(map[string]any)
			if !ok {
				continue
			}
			params, _ := o["parameters"].([]any)
			for _, p := range params {
				p := p.(map[string]any)
				check(method+" "+path+" "+p["in"].(string)+"."+p["name"].(string), p["schema"].(map[string]any), map[string]bool{})
			}
			if rb, ok := o["requestBody"].(map[string]any); ok {
				content, _ := rb["content"].(map[string]any)
				for _, mt := range content {
					check(method+" "+path+" body", mt.(map[string]any)["schema"].(map[string]any), map[string]bool{})
				}
			}
		}
	}
}
