package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/command/internal/operator/admin"
	"github.com/sluicehq/sluice/command/internal/operator/admintoken"
	"github.com/sluicehq/sluice/command/internal/operator/portallink"
	"github.com/sluicehq/sluice/command/internal/pipeline"
	"github.com/sluicehq/sluice/internal/keyring"
	"github.com/sluicehq/sluice/internal/provider/kinds"
	"github.com/sluicehq/sluice/internal/store/tenancy"
)

// The portal has a listener of its own: it serves none of the admin
// listener's routes (no operation of the admin API, no /metrics, no
// profiles, no sign-in with an admin token), and its open page uses no
// link on GET; the POST that uses one answers the portal's cookie. The
// link's secret is in no log line.
func TestThePortalListenerServesNoAdminRoute(t *testing.T) {
	t.Parallel()
	dbURL, pool := ownDatabase(t, "portal")
	key := newKey(t)
	ring, err := keyring.Parse(key)
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	ctx, stop := context.WithCancel(context.Background())
	p, err := pipeline.Start(ctx, pipeline.Config{DatabaseURL: dbURL, SecretKey: key, HTTPAddr: "127.0.0.1:0", AdminAddr: "127.0.0.1:0", Ingest: true,
		Profiling: true, Portal: pipeline.PortalConfig{Addr: "127.0.0.1:0", FrameAncestors: []string{"https://app.example"}}},
		slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	if err != nil {
		stop()
		t.Fatal(err)
	}
	t.Cleanup(func() { stop(); _ = p.Wait() })
	adminURL, portalURL := "http://"+p.AdminAddr().String(), "http://"+p.PortalAddr().String()
	f := newTenantIn(t, tenancy.Store{Pool: pool, Ring: ring, Providers: kinds.Builtin()})
	_, operator, err := admintoken.Store{Pool: pool}.Create(t.Context(), admintoken.New{Name: "portal", Role: admintoken.RoleOperate})
	if err != nil {
		t.Fatal(err)
	}
	do := func(method, u, token string, body io.Reader, h ...string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(method, u, body)
		req.Header.Set("Authorization", "Bearer "+token)
		for i := 0; i+1 < len(h); i += 2 {
			req.Header.Set(h[i], h[i+1])
		}
		resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}

	// Every path of the admin listener's document, and what it serves
	// beside: each is there, and the portal has none of them.
	var doc struct {
		Paths map[string]map[string]any `json:"paths"`
	}
	if err := json.NewDecoder(do(http.MethodGet, adminURL+admin.OpenAPIPath, "", nil).Body).Decode(&doc); err != nil || len(doc.Paths) < 20 {
		t.Fatalf("the admin document: %d paths, %v", len(doc.Paths), err)
	}
	param := regexp.MustCompile(`\{\w+\}`)
	paths := []string{"GET /metrics", "GET /debug/pprof/", "GET " + admin.OpenAPIPath}
	for path, item := range doc.Paths {
		for method := range item {
			paths = append(paths, strings.ToUpper(method)+" "+param.ReplaceAllString(path, f.tenantID))
		}
	}
	for _, mp := range paths {
		method, path, _ := strings.Cut(mp, " ")
		if status := do(method, adminURL+path, operator, strings.NewReader("{}"), "Content-Type", "application/json").StatusCode; status == http.StatusNotFound && !strings.HasPrefix(path, admin.Prefix+"/") {
			t.Errorf("the admin listener does not serve %s (%d): the walk proves nothing", mp, status)
		}
		if status := do(method, portalURL+path, operator, strings.NewReader("{}"), "Content-Type", "application/json").StatusCode; status != http.StatusNotFound && status != http.StatusMethodNotAllowed {
			t.Errorf("the portal listener answers %s with %d, want 404", mp, status)
		}
	}

	// The console's sign-in with an admin token is not there either.
	signIn := do(http.MethodPost, portalURL+"/console/sign-in", "", strings.NewReader(url.Values{"token": {operator}}.Encode()),
		"Content-Type", "application/x-www-form-urlencoded", "Sec-Fetch-Site", "same-origin")
	if len(signIn.Cookies()) > 0 {
		t.Errorf("the portal signed an admin token in: %d %v", signIn.StatusCode, signIn.Cookies())
	}

	// A link: its open page uses nothing on GET, frames as the
	// deployment says, and leaks no URL; the POST uses it.
	resp := do(http.MethodPost, adminURL+admin.Prefix+"/tenants/"+f.tenantID+"/portal-links", operator,
		strings.NewReader(`{"scope":"tenant","access":"read"}`), "Content-Type", "application/json")
	var link admin.PortalLinkCreated
	if err := json.NewDecoder(resp.Body).Decode(&link); err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("mint: %d %v", resp.StatusCode, err)
	}
	open, secret, _ := strings.Cut(link.URL, "#")
	page := do(http.MethodGet, portalURL+open, "", nil)
	h := page.Header
	if page.StatusCode != http.StatusOK || !strings.Contains(h.Get("Content-Security-Policy"), "frame-ancestors https://app.example;") ||
		h.Get("X-Frame-Options") != "" || h.Get("Referrer-Policy") != "no-referrer" {
		t.Errorf("the open page: %d, headers %v", page.StatusCode, h)
	}
	if l, err := (portallink.Store{Pool: pool}).Get(t.Context(), link.ID); err != nil || l.UsedAt != nil {
		t.Fatalf("a GET of the open page used the link: %+v %v", l, err)
	}
	used := do(http.MethodPost, portalURL+portallink.OpenPath, "", strings.NewReader(url.Values{"link": {secret}}.Encode()),
		"Content-Type", "application/x-www-form-urlencoded", "Sec-Fetch-Site", "same-origin")
	cookie := used.Header.Get("Set-Cookie")
	if used.StatusCode != http.StatusSeeOther || !strings.HasPrefix(cookie, "sluice_portal=") {
		t.Fatalf("the POST: %d, cookie %q", used.StatusCode, cookie)
	}
	for _, attr := range []string{"HttpOnly", "Secure", "SameSite=None", "Partitioned", "Path=/console"} {
		if !strings.Contains(cookie, attr) {
			t.Errorf("the portal's cookie lacks %s: %q", attr, cookie)
		}
	}
	stop()
	_ = p.Wait()
	if strings.Contains(logs.String(), secret) {
		t.Error("the link's secret is in the process's log")
	}
}
