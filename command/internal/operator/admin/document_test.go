package admin_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"

	"github.com/sluicehq/sluice/command/internal/operator/admintoken"
	"github.com/sluicehq/sluice/internal/testenv"
)

// validDocument fails t unless raw is a valid OpenAPI document of version
// by the version's own JSON Schema (libopenapi's, the OpenAPI Initiative's
// with no unknown keyword allowed but x- extensions).
func validDocument(t *testing.T, what string, raw []byte, version string) map[string]any {
	t.Helper()
	var spec map[string]any
	if err := json.Unmarshal(raw, &spec); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if spec["openapi"] != version {
		t.Fatalf("%s is OpenAPI %v, want %s", what, spec["openapi"], version)
	}
	doc, err := libopenapi.NewDocument(raw)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	v, errs := validator.NewValidator(doc)
	if len(errs) > 0 {
		t.Fatalf("%s: validator: %v", what, errs)
	}
	if ok, verrs := v.ValidateDocument(); !ok {
		for _, e := range verrs {
			for _, se := range e.SchemaValidationErrors {
				t.Errorf("%s: %s: %s", what, se.FieldPath, se.Reason)
			}
			t.Errorf("%s: %s: %s", what, e.Message, e.Reason)
		}
	}
	return spec
}

// refSiblings lists where v holds a $ref with keywords beside it, which
// OpenAPI 3.0 ignores (and its JSON Schema does not catch: a Reference
// object allows anything beside $ref).
func refSiblings(v any, at string) []string {
	var found []string
	switch v := v.(type) {
	case map[string]any:
		if _, ok := v["$ref"]; ok && len(v) > 1 {
			found = append(found, at)
		}
		for k, sub := range v {
			found = append(found, refSiblings(sub, at+"/"+k)...)
		}
	case []any:
		for i, sub := range v {
			found = append(found, refSiblings(sub, fmt.Sprintf("%s/%d", at, i))...)
		}
	}
	return found
}

// The 3.0 rendering, served for the tools that read only 3.0, is a valid
// OpenAPI 3.0 document (no keyword 3.0 does not know, no $ref with
// siblings) that keeps what the 3.1 one says (every operation, the
// patterns' descriptions as x-patternDescription); the 3.1 document is
// valid 3.1; both are served as YAML too, without a token, and answer HEAD.
func TestTheDocumentsAreValidInTheirVersions(t *testing.T) {
	t.Parallel()
	b := setup(t)
	get := func(path string) []byte {
		t.Helper()
		resp, got := b.raw(t, "", http.MethodGet, path, "", "")
		if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/openapi+") {
			t.Fatalf("GET %s: %d %s", path, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		if head, body := b.raw(t, "", http.MethodHead, path, "", ""); head.StatusCode != http.StatusOK || len(body) > 0 {
			t.Errorf("HEAD %s: %d with %d bytes, want 200 without a body", path, head.StatusCode, len(body))
		}
		return got
	}
	v31 := validDocument(t, "the 3.1 document", get("/admin/v1/openapi.json"), "3.1.0")
	raw30 := get("/admin/v1/openapi-3.0.json")
	v30 := validDocument(t, "the 3.0 rendering", raw30, "3.0.3")
	for _, at := range refSiblings(v30, "") {
		t.Errorf("the 3.0 rendering: a $ref with siblings at %s", at)
	}
	if n31, n30 := strings.Count(mustJSON(v31), `"patternDescription"`), strings.Count(string(raw30), `"x-patternDescription"`); n31 == 0 || n30 != n31 {
		t.Errorf("patternDescription: %d in 3.1, x-patternDescription %d in 3.0, want as many and some", n31, n30)
	}
	if len(v30["paths"].(map[string]any)) != len(v31["paths"].(map[string]any)) {
		t.Errorf("the 3.0 rendering has %d paths, the 3.1 document %d", len(v30["paths"].(map[string]any)), len(v31["paths"].(map[string]any)))
	}
	for _, path := range []string{"/admin/v1/openapi.yaml", "/admin/v1/openapi-3.0.yaml"} {
		doc, err := libopenapi.NewDocument(get(path))
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if _, errs := doc.BuildV3Model(); errs != nil {
			t.Errorf("%s: %v", path, errs)
		}
	}
}

// HEAD is answered wherever GET is (RFC 9110, 9.3.2): the GET's status and
// headers without its body, to a read token as to any, refused as the GET
// would be without a token; where no GET is, 405 naming the methods.
func TestHeadIsAnsweredWhereGetIs(t *testing.T) {
	t.Parallel()
	b := setup(t)
	w := b.newWorld(t)
	read := b.token(t, admintoken.RoleRead, "")
	for _, path := range []string{"/admin/v1/tenants", "/admin/v1/tenants/" + w.tenant, "/admin/v1/sources?tenant_id=" + w.tenant, "/admin/v1/overview"} {
		get, body := b.raw(t, read, http.MethodGet, path, "", "")
		head, none := b.raw(t, read, http.MethodHead, path, "", "")
		if head.StatusCode != http.StatusOK || get.StatusCode != http.StatusOK || len(none) != 0 || len(body) == 0 {
			t.Errorf("HEAD %s: %d with %d bytes (GET: %d with %d), want 200 without a body", path, head.StatusCode, len(none), get.StatusCode, len(body))
		}
		if head.Header.Get("Content-Type") != get.Header.Get("Content-Type") || head.Header.Get("X-Request-Id") == "" {
			t.Errorf("HEAD %s: headers %v, want the GET's (%v)", path, head.Header, get.Header)
		}
	}
	resp, got := b.raw(t, read, http.MethodHead, "/admin/v1/tenants/5b2e1d4c-0000-4000-8000-000000000000", "", "")
	wantProblem(t, "HEAD of an unknown tenant", resp, got, http.StatusNotFound)
	resp, got = b.raw(t, "", http.MethodHead, "/admin/v1/tenants", "", "")
	wantProblem(t, "HEAD without a token", resp, got, http.StatusUnauthorized)
	resp, got = b.raw(t, read, http.MethodHead, "/admin/v1/dead-letters/replay", "", "")
	wantProblem(t, "HEAD where only POST is", resp, got, http.StatusMethodNotAllowed)
	if allow := resp.Header.Get("Allow"); allow != "POST" {
		t.Errorf("HEAD where only POST is: Allow %q, want POST", allow)
	}
}

// The document is one a client generator can work from: every operation
// has an operationId, every body a named schema; each paged list says how
// it pages (x-pagination, the same names everywhere); each create declares
// Idempotency-Key; 429 and 503 declare Retry-After; a problem names its
// kind from a closed list.
func TestTheDocumentServesClientGenerators(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.load(t)
	want := map[string]any{"cursor_param": "cursor", "limit_param": "limit", "next_field": "next_cursor", "items_field": "items"}
	paged := 0
	for path, item := range b.spec["paths"].(map[string]any) {
		for method, raw := range item.(map[string]any) {
			o := raw.(map[string]any)
			id, _ := o["operationId"].(string)
			if id == "" {
				t.Errorf("%s %s has no operationId", method, path)
			}
			for _, at := range inlineBodies(o) {
				t.Errorf("%s: an unnamed schema at %s", id, at)
			}
			params := map[string]bool{}
			ps, _ := o["parameters"].([]any)
			for _, p := range ps {
				p := p.(map[string]any)
				params[p["in"].(string)+"."+p["name"].(string)] = true
			}
			if params["query.cursor"] {
				paged++
				if got := o["x-pagination"]; mustJSON(got) != mustJSON(want) {
					t.Errorf("%s takes a cursor: x-pagination %v, want %v", id, got, want)
				}
			}
			if strings.HasPrefix(id, "create-") && !params["header.Idempotency-Key"] {
				t.Errorf("%s declares no Idempotency-Key", id)
			}
			responses := o["responses"].(map[string]any)
			for _, status := range []string{"429", "503"} {
				r, _ := responses[status].(map[string]any)
				headers, _ := r["headers"].(map[string]any)
				if _, ok := headers["Retry-After"]; !ok {
					t.Errorf("%s: %s declares no Retry-After", id, status)
				}
			}
		}
	}
	if paged < 10 {
		t.Errorf("%d paged lists, want every list that pages (at least 10)", paged)
	}
	problem := b.spec["components"].(map[string]any)["schemas"].(map[string]any)["Problem"].(map[string]any)
	kind, _ := problem["properties"].(map[string]any)["kind"].(map[string]any)
	if len(kind["enum"].([]any)) != 7 {
		t.Errorf("Problem.kind: %v, want the seven kinds as an enum", kind)
	}
}

// inlineBodies lists the request and response bodies of o whose schema is
// an object written in place (a generator would name it Body1, Body2).
func inlineBodies(o map[string]any) []string {
	var found []string
	check := func(at string, content any) {
		for ct, mt := range asMap(content) {
			s := asMap(asMap(mt)["schema"])
			if _, ref := s["$ref"]; !ref && (s["type"] == "object" || s["properties"] != nil) {
				found = append(found, at+" "+ct)
			}
		}
	}
	check("requestBody", asMap(o["requestBody"])["content"])
	for status, r := range asMap(o["responses"]) {
		check("responses."+status, asMap(r)["content"])
	}
	return found
}

func asMap(v any) map[string]any { m, _ := v.(map[string]any); return m }

// What the catalogue refuses of a new event type and the document can
// say, it says (the name's grammar, a schema that is an object, a time
// format only with its place), and the edge refuses it naming the field.
func TestTheDocumentStatesTheEventTypeRules(t *testing.T) {
	t.Parallel()
	b := setup(t)
	w := b.newWorld(t)
	b.load(t)
	s := b.spec["components"].(map[string]any)["schemas"].(map[string]any)["NewEventTypeBody"].(map[string]any)
	props := s["properties"].(map[string]any)
	if asMap(props["event_type"])["pattern"] == nil || asMap(props["schema"])["type"] != "object" || s["dependentRequired"] == nil {
		t.Errorf("NewEventTypeBody states no grammar, schema type or dependentRequired: %v", s)
	}
	root := b.token(t, admintoken.RoleOperate, "")
	path := "/admin/v1/tenants/" + w.tenant + "/event-types"
	spec := func(change map[string]any) map[string]any {
		v := map[string]any{"source_kind": "api", "event_type": "order.placed", "resource_type": "order", "schema": map[string]any{"type": "object"}}
		for k, x := range change {
			v[k] = x
		}
		return v
	}
	b.wantRefused(t, root, []refusal{
		{http.MethodPost, path, spec(map[string]any{"event_type": "order placed!"}), "body.event_type"},
		{http.MethodPost, path, spec(map[string]any{"schema": nil}), "body.schema"},
		{http.MethodPost, path, spec(map[string]any{"schema": "a string"}), "body.schema"},
		{http.MethodPost, path, spec(map[string]any{"event_time_format": "unix"}), "event_time_at"},
	})
}

// A source's ip_allowlist takes CIDRs, and the document says which.
func TestIPAllowlistTakesCIDRs(t *testing.T) {
	t.Parallel()
	b := setup(t)
	w := b.newWorld(t)
	root := b.token(t, admintoken.RoleOperate, "")
	source := func(cidrs ...string) map[string]any {
		return map[string]any{"tenant_id": w.tenant, "kind": "github", "account": "acct_" + testenv.RandomSuffix(), "secret": "s3cret", "ip_allowlist": cidrs}
	}
	b.wantRefused(t, root, []refusal{
		{http.MethodPost, "/admin/v1/sources", source("10.0.0.1"), "body.ip_allowlist[0]"},
		{http.MethodPost, "/admin/v1/sources", source("10.0.0.0/33"), "body.ip_allowlist[0]"},
		{http.MethodPost, "/admin/v1/sources", source("010.0.0.0/8"), "body.ip_allowlist[0]"},
		{http.MethodPost, "/admin/v1/sources", source("fe80::/8", "any"), "body.ip_allowlist[1]"},
	})
	if status, got := b.do(t, root, http.MethodPost, "/admin/v1/sources", source("192.0.2.0/24", "2001:db8::/32", "10.1.2.3/8")); status != http.StatusCreated {
		t.Errorf("a source with CIDRs: %d %s, want 201", status, got)
	}
}

// A list field of a body is never null in the document, as the edge
// refuses null: an endpoint's filters, a source's ip_allowlist.
func TestBodyListsAreNotNullable(t *testing.T) {
	t.Parallel()
	b := setup(t)
	w := b.newWorld(t)
	b.load(t)
	schemas := b.spec["components"].(map[string]any)["schemas"].(map[string]any)
	for _, f := range []struct{ schema, field string }{{"NewEndpointBody", "filters"}, {"EndpointPatchBody", "filters"}, {"NewSourceBody", "ip_allowlist"}} {
		if typ := asMap(asMap(asMap(schemas[f.schema])["properties"])[f.field])["type"]; typ != "array" {
			t.Errorf("%s.%s: type %v, want array (never null)", f.schema, f.field, typ)
		}
	}
	root := b.token(t, admintoken.RoleOperate, "")
	b.wantRefused(t, root, []refusal{
		{http.MethodPost, "/admin/v1/tenants/" + w.tenant + "/endpoints", map[string]any{"url": "https://example.com/hook", "filters": nil}, "body.filters"},
		{http.MethodPost, "/admin/v1/sources", map[string]any{"tenant_id": w.tenant, "kind": "github", "account": "a", "secret": "s", "ip_allowlist": nil}, "body.ip_allowlist"},
	})
}
