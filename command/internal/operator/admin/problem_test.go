package admin_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/command/internal/operator/admintoken"
)

// raw sends a request as is (no validation against the document: some of
// these have no operation) and returns the answer.
func (b *bundle) raw(t *testing.T, token, method, path, contentType, body string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, b.srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got, _ := io.ReadAll(resp.Body)
	return resp, got
}

// wantProblem checks an answer is an RFC 9457 problem detail of status.
func wantProblem(t *testing.T, what string, resp *http.Response, got []byte, status int) {
	t.Helper()
	if resp.StatusCode != status {
		t.Errorf("%s: %d %s, want %d", what, resp.StatusCode, got, status)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/problem+json") {
		t.Errorf("%s: content type %q, want application/problem+json", what, ct)
	}
	if resp.Request.Method == http.MethodHead {
		return
	}
	var p struct {
		Title  string `json:"title"`
		Status int    `json:"status"`
		Detail string `json:"detail"`
	}
	if err := json.Unmarshal(got, &p); err != nil || p.Status != status || p.Title == "" || p.Detail == "" {
		t.Errorf("%s: body %s is no problem detail of %d", what, got, status)
	}
}

// Every error is a problem detail: an unknown route (404), a wrong method
// (405 with Allow, HEAD too), a body of another media type (415), a body
// that is no JSON (400); and the document declares 400, 413 and 415 on
// every operation that reads a body.
func TestEveryErrorIsAProblemDetail(t *testing.T) {
	t.Parallel()
	b := setup(t)
	w := b.newWorld(t)
	root := b.token(t, admintoken.RoleOperate, "")
	for _, c := range []struct {
		what, method, path, contentType, body string
		status                                int
	}{
		{"unknown route", http.MethodGet, "/admin/v1/nosuch", "", "", 404},
		{"unknown route outside the API", http.MethodGet, "/nosuch", "", "", 404},
		{"unknown route, no token", http.MethodGet, "/admin/v1/tenants/" + w.tenant + "/nosuch", "", "", 404},
		{"wrong method", http.MethodDelete, "/admin/v1/tenants", "", "", 405},
		{"HEAD where no GET is", http.MethodHead, "/admin/v1/tenants/" + w.tenant + "/limits", "", "", 405},
		{"a method of another path's route", http.MethodGet, "/admin/v1/dead-letters/replay", "", "", 405},
		{"another media type", http.MethodPost, "/admin/v1/tenants", "text/plain", `{"name":"x"}`, 415},
		{"no JSON", http.MethodPost, "/admin/v1/tenants", "application/json", `{"name":`, 400},
	} {
		token := root
		if c.what == "unknown route, no token" {
			token = ""
		}
		resp, got := b.raw(t, token, c.method, c.path, c.contentType, c.body)
		wantProblem(t, c.what, resp, got, c.status)
		if c.status == 405 && resp.Header.Get("Allow") == "" {
			t.Errorf("%s: no Allow header", c.what)
		}
	}
	b.load(t)
	paths, _ := b.spec["paths"].(map[string]any)
	for path, item := range paths {
		for method, raw := range item.(map[string]any) {
			o, ok := raw.(map[string]any)
			if !ok {
				continue
			}
			if _, hasBody := o["requestBody"]; !hasBody {
				continue
			}
			responses, _ := o["responses"].(map[string]any)
			for _, status := range []string{"400", "413", "415", "422"} {
				if _, ok := responses[status]; !ok {
					t.Errorf("%s %s reads a body and does not declare %s", method, path, status)
				}
			}
		}
	}
}

// since at or after until is 422 on every list and on the filtered
// replay, which replays nothing; a refusal of a filter speaks of the
// filter, never of how far a replay came or internal names.
func TestSinceAfterUntilAndFiltersAreRefusedInTheirOwnWords(t *testing.T) {
	t.Parallel()
	b := setup(t)
	w := b.newWorld(t)
	root := b.token(t, admintoken.RoleOperate, "")
	backwards := "since=2026-02-01T00:00:00Z&until=2026-01-01T00:00:00Z"
	for _, path := range []string{"/admin/v1/events?tenant_id=" + w.tenant + "&" + backwards, "/admin/v1/dead-letters?" + backwards,
		"/admin/v1/conflicts?" + backwards} {
		if status, got := b.do(t, root, http.MethodGet, path, nil); status != http.StatusUnprocessableEntity || !strings.Contains(string(got), "until") {
			t.Errorf("GET %s: %d %s, want 422 naming until", path, status, got)
		}
	}
	status, got := b.do(t, root, http.MethodPost, "/admin/v1/dead-letters/replay",
		map[string]any{"tenant_id": w.tenant, "since": "2026-02-01T00:00:00Z", "until": "2026-01-01T00:00:00Z"})
	if status != http.StatusUnprocessableEntity || !strings.Contains(string(got), "body.until") {
		t.Errorf("replay since after until: %d %s, want 422 naming body.until", status, got)
	}
	for _, c := range []struct {
		method, path string
		body         any
	}{
		{http.MethodPost, "/admin/v1/dead-letters/replay", map[string]any{}},
		{http.MethodGet, "/admin/v1/events?status=waiting&cursor=garbage", nil},
		{http.MethodGet, "/admin/v1/dead-letters?cursor=garbage", nil},
	} {
		status, got := b.do(t, root, c.method, c.path, c.body)
		if status != http.StatusUnprocessableEntity || bytes.Contains(got, []byte("stopped at")) || bytes.Contains(got, []byte("after:")) ||
			bytes.Contains(got, []byte("replayed [")) {
			t.Errorf("%s %s: %d %s, want 422 in the filter's own words", c.method, c.path, status, got)
		}
	}
	if n := b.count(t, `SELECT count(*) FROM dead_letters WHERE headers->>'ce_tenantid' = $1 AND replayed_at IS NOT NULL`, w.tenant); n != 0 {
		t.Errorf("a refused replay replayed %d letters", n)
	}
}
