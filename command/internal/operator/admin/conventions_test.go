package admin_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/command/internal/operator/admintoken"
	"github.com/sluicehq/sluice/internal/testenv"
)

// send is one request with headers, its answer validated against the
// document like do's.
func (b *bundle) send(t *testing.T, token, method, path string, body any, headers map[string]string) (int, []byte, http.Header) {
	t.Helper()
	return b.doAt(t, b.srv.URL, token, method, path, body, headers)
}

// creates are the create operations, each with a body making something new.
func creates(w world) map[string]struct {
	path string
	body func() map[string]any
} {
	return map[string]struct {
		path string
		body func() map[string]any
	}{
		"tenant": {"/admin/v1/tenants", func() map[string]any { return map[string]any{"name": "t-" + testenv.RandomSuffix()} }},
		"source": {"/admin/v1/sources", func() map[string]any {
			return map[string]any{"tenant_id": w.tenant, "kind": "github", "account": "acct_" + testenv.RandomSuffix(), "secret": "s3cret"}
		}},
		"workspace": {"/admin/v1/workspaces", func() map[string]any {
			return map[string]any{"tenant_id": w.tenant, "customer": "cus_" + testenv.RandomSuffix()}
		}},
		"api key":     {"/admin/v1/api-keys", func() map[string]any { return map[string]any{"tenant_id": w.tenant} }},
		"admin token": {"/admin/v1/admin-tokens", func() map[string]any { return map[string]any{"role": "read", "name": testenv.RandomSuffix()} }},
		"event type": {"/admin/v1/tenants/" + w.tenant + "/event-types", func() map[string]any {
			return map[string]any{"source_kind": "api", "event_type": "conv." + testenv.RandomSuffix(), "resource_type": "order", "schema": map[string]any{"type": "object"}}
		}},
	}
}

// A create answers 201 with Location naming what it made, which a GET
// finds; every answer carries X-Request-Id (a well-formed one sent is
// kept), problems repeat it in request_id; answers are never cached; the
// document names its server.
func TestCreatesLocateWhatTheyMadeAndEveryAnswerHasARequestID(t *testing.T) {
	t.Parallel()
	b := setup(t)
	w := b.newWorld(t)
	root := b.token(t, admintoken.RoleOperate, "")
	for what, c := range creates(w) {
		status, got, h := b.send(t, root, http.MethodPost, c.path, c.body(), nil)
		loc := h.Get("Location")
		if status != http.StatusCreated || !strings.HasPrefix(loc, "/admin/v1/") {
			t.Errorf("create %s: %d %s, Location %q, want 201 with a Location", what, status, got, loc)
			continue
		}
		if status, got := b.do(t, root, http.MethodGet, loc, nil); status != http.StatusOK {
			t.Errorf("GET the Location of a new %s (%s): %d %s", what, loc, status, got)
		}
		if h.Get("Cache-Control") != "no-store" {
			t.Errorf("create %s: Cache-Control %q, want no-store", what, h.Get("Cache-Control"))
		}
	}
	_, _, h := b.send(t, root, http.MethodPost, "/admin/v1/sources/"+w.source+"/rotate-secret", map[string]any{}, nil)
	if h.Get("Cache-Control") != "no-store" {
		t.Errorf("a generated secret: Cache-Control %q, want no-store", h.Get("Cache-Control"))
	}
	seen := map[string]bool{}
	for _, c := range []struct {
		token, method, path string
		problem             bool
	}{
		{root, http.MethodGet, "/admin/v1/tenants/" + w.tenant, false},
		{root, http.MethodGet, "/admin/v1/tenants/5b2e1d4c-0000-4000-8000-000000000000", true},
		{"slk_adm_wrong", http.MethodGet, "/admin/v1/tenants", true},
		{root, http.MethodGet, "/admin/v1/nosuch", true},
		{root, http.MethodDelete, "/admin/v1/tenants", true},
	} {
		resp, got := b.raw(t, c.token, c.method, c.path, "", "")
		id := resp.Header.Get("X-Request-Id")
		if id == "" || seen[id] {
			t.Errorf("%s %s: X-Request-Id %q, want a new one per answer", c.method, c.path, id)
		}
		seen[id] = true
		if c.problem {
			var p struct {
				RequestID string `json:"request_id"`
			}
			if err := json.Unmarshal(got, &p); err != nil || p.RequestID != id {
				t.Errorf("%s %s: problem %s does not carry request_id %s", c.method, c.path, got, id)
			}
		}
	}
	req, _ := http.NewRequest(http.MethodGet, b.srv.URL+"/admin/v1/tenants/"+w.tenant, nil)
	req.Header.Set("Authorization", "Bearer "+root)
	req.Header.Set("X-Request-Id", "trace-42.a_b")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := resp.Header.Get("X-Request-Id"); got != "trace-42.a_b" {
		t.Errorf("a request id sent: answered with %q, want it kept", got)
	}
	req.Header.Set("X-Request-Id", "evil\x1b[2Jid")
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
		if got := resp.Header.Get("X-Request-Id"); got == "" || strings.Contains(got, "evil") {
			t.Errorf("a malformed request id sent: answered with %q, want one of ours", got)
		}
	}
	b.load(t)
	if servers, _ := b.spec["servers"].([]any); len(servers) == 0 {
		t.Error("the document names no server")
	}
}

// Idempotency-Key: the same key and body from the same token answers
// what the first request did and makes nothing more; another body is 422;
// a key still in flight is 409; another token's key is its own. A create
// whose answer held a secret shown once is never stored: its replay is
// 409 naming what was made.
func TestIdempotencyKeysReplayCreatesOnce(t *testing.T) {
	t.Parallel()
	b := setup(t)
	w := b.newWorld(t)
	rec, root := b.tokenRecord(t, admintoken.RoleOperate, "")
	other := b.token(t, admintoken.RoleOperate, "")
	otherTenant := b.newTenant(t)
	for what, c := range creates(w) {
		key := "k-" + testenv.RandomSuffix()
		body := c.body()
		s1, first, h1 := b.send(t, root, http.MethodPost, c.path, body, map[string]string{"Idempotency-Key": key})
		s2, second, h2 := b.send(t, root, http.MethodPost, c.path, body, map[string]string{"Idempotency-Key": key})
		if s1 != http.StatusCreated {
			t.Errorf("create %s: %d %s", what, s1, first)
			continue
		}
		id := fmt.Sprint(decode[map[string]any](t, first)["id"])
		switch what {
		case "api key", "admin token":
			if s2 != http.StatusConflict || !strings.Contains(string(second), id) || !strings.Contains(string(second), "shown once") ||
				strings.Contains(string(second), `"key"`) || strings.Contains(string(second), `"token"`) || h2.Get("Location") != h1.Get("Location") {
				t.Errorf("%s again with its key: %d %s, want 409 naming %s without the secret", what, s2, second, id)
			}
		default:
			if s2 != s1 || !bytes.Equal(first, second) || h2.Get("Location") != h1.Get("Location") || h2.Get("Idempotent-Replayed") != "true" {
				t.Errorf("%s again with its key: %d %s, want the first answer %d %s replayed", what, s2, second, s1, first)
			}
		}
		changed := c.body()
		if what == "api key" { // its body has nothing else to change
			changed["tenant_id"] = otherTenant
		}
		if s, got, _ := b.send(t, root, http.MethodPost, c.path, changed, map[string]string{"Idempotency-Key": key}); s != http.StatusUnprocessableEntity ||
			!strings.Contains(string(got), "Idempotency-Key") {
			t.Errorf("%s with its key and another body: %d %s, want 422", what, s, got)
		}
		if s, got, _ := b.send(t, other, http.MethodPost, c.path, changed, map[string]string{"Idempotency-Key": key}); s != http.StatusCreated {
			t.Errorf("%s with another token's key: %d %s, want 201 (keys are per token)", what, s, got)
		}
	}
	if n := b.count(t, `SELECT count(*) FROM api_keys WHERE tenant_id = $1`, w.tenant); n != 2 {
		t.Errorf("api keys of the tenant: %d, want 2 (the world's, and one however often its create was sent)", n)
	}
	if n := b.count(t, `SELECT count(*) FROM admin_idempotency_keys WHERE token_id = $1`, rec.ID); n != len(creates(w)) {
		t.Errorf("keys kept for the token: %d, want %d", n, len(creates(w)))
	}
	if n := b.count(t, `SELECT count(*) FROM admin_idempotency_keys WHERE token_id = $1 AND operation IN ('create-api-key', 'create-admin-token') AND body IS NOT NULL`, rec.ID); n != 0 {
		t.Errorf("%d answers holding a secret were stored", n)
	}
	if n := b.count(t, `SELECT count(*) FROM admin_idempotency_keys WHERE position('slk_adm_' in convert_from(coalesce(body, ''), 'UTF8')) > 0 OR position('sk_sluice_' in convert_from(coalesce(body, ''), 'UTF8')) > 0`); n != 0 {
		t.Errorf("%d stored answers hold a key or token", n)
	}
	// A key whose first request has not ended.
	// Claimed as the API claims a key: a salted digest of the request.
	digest := sha256.Sum256([]byte("\x00POST /admin/v1/tenants\n" + `{"name":"in flight"}`))
	if _, err := b.pool.Exec(t.Context(), `INSERT INTO admin_idempotency_keys (token_id, key, operation, salt, request_sha256) VALUES ($1, 'in-flight', 'create-tenant', '\x00', $2)`,
		rec.ID, digest[:]); err != nil {
		t.Fatal(err)
	}
	if s, got, _ := b.send(t, root, http.MethodPost, "/admin/v1/tenants", map[string]any{"name": "in flight"}, map[string]string{"Idempotency-Key": "in-flight"}); s != http.StatusConflict ||
		!strings.Contains(string(got), "in flight") {
		t.Errorf("a key in flight: %d %s, want 409", s, got)
	}
	for _, key := range []string{"has space", strings.Repeat("k", 256), "tab\tkey", ""} {
		if s, got, _ := b.send(t, root, http.MethodPost, "/admin/v1/tenants", map[string]any{"name": "bad key"}, map[string]string{"Idempotency-Key": key}); s != http.StatusUnprocessableEntity {
			t.Errorf("Idempotency-Key %q: %d %s, want 422", key, s, got)
		}
	}
	if n := b.count(t, `SELECT count(*) FROM tenants WHERE name IN ('in flight', 'bad key')`); n != 0 {
		t.Errorf("%d tenants made by refused requests", n)
	}
	b.load(t)
	doc := mustJSON(b.spec)
	if strings.Count(doc, `"name":"Idempotency-Key"`) < len(creates(w)) {
		t.Errorf("the document declares Idempotency-Key on %d operations, want every create (%d)", strings.Count(doc, `"name":"Idempotency-Key"`), len(creates(w)))
	}
}

// The audit trail filters by time, action, token and outcome.
func TestAuditFiltersByTimeActionTokenAndOutcome(t *testing.T) {
	t.Parallel()
	b := setup(t)
	w := b.newWorld(t)
	rec, tok := b.tokenRecord(t, admintoken.RoleOperate, "")
	readRec, read := b.tokenRecord(t, admintoken.RoleRead, "")
	disable := "/admin/v1/sources/" + w.source + "/disable"
	b.do(t, tok, http.MethodPost, disable, nil)
	b.do(t, read, http.MethodPost, disable, nil) // forbidden
	b.do(t, tok, http.MethodPost, "/admin/v1/sources/"+w.source+"/enable", nil)
	root := b.token(t, admintoken.RoleRead, "")
	for _, c := range []struct {
		query string
		want  []string
	}{
		{"token_id=" + rec.ID, []string{"source.enable:ok", "source.disable:ok"}},
		{"token_id=" + readRec.ID, []string{"source.disable:forbidden"}},
		{"token_id=" + rec.ID + "&action=source.disable", []string{"source.disable:ok"}},
		{"token_id=" + readRec.ID + "&outcome=forbidden", []string{"source.disable:forbidden"}},
		{"token_id=" + readRec.ID + "&outcome=ok", nil},
		{"token_id=" + rec.ID + "&since=2999-01-01T00:00:00Z", nil},
		{"token_id=" + rec.ID + "&until=2000-01-01T00:00:00Z", nil},
		{"token_id=" + rec.ID + "&since=2000-01-01T00:00:00Z&until=2999-01-01T00:00:00Z&limit=1", []string{"source.enable:ok"}},
	} {
		status, got := b.do(t, root, http.MethodGet, "/admin/v1/audit?"+c.query, nil)
		var names []string
		for _, e := range decode[struct {
			Items []struct{ Action, Outcome string }
		}](t, got).Items {
			names = append(names, e.Action+":"+e.Outcome)
		}
		if status != http.StatusOK || strings.Join(names, ",") != strings.Join(c.want, ",") {
			t.Errorf("audit?%s: %d %v, want %v", c.query, status, names, c.want)
		}
	}
	if status, got := b.do(t, root, http.MethodGet, "/admin/v1/audit?outcome=nosuch", nil); status != http.StatusUnprocessableEntity {
		t.Errorf("an unknown outcome: %d %s, want 422", status, got)
	}
	if status, got := b.do(t, root, http.MethodGet, "/admin/v1/audit?since=2026-02-01T00:00:00Z&until=2026-01-01T00:00:00Z", nil); status != http.StatusUnprocessableEntity {
		t.Errorf("since after until: %d %s, want 422", status, got)
	}
}
