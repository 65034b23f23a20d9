package console_test

import (
	"context"
	"fmt"
	stdhtml "html"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/chromedp"

	"github.com/sluicehq/sluice/command/internal/operator/admin"
	"github.com/sluicehq/sluice/command/internal/operator/admintoken"
	"github.com/sluicehq/sluice/command/internal/operator/console"
	"github.com/sluicehq/sluice/command/internal/operator/portallink"
	"github.com/sluicehq/sluice/internal/listen"
)

// portalServer is the portal's listener beside b's admin listener: the
// console in portal mode, asking b's API in process, and nothing else.
func (b *bundle) portalServer(t *testing.T, ancestors ...string) *httptest.Server {
	t.Helper()
	srv := listen.NewPublic("127.0.0.1:0", slog.New(slog.DiscardHandler), nil, false)
	_, err := console.Register(srv.Engine, console.Config{Pool: b.pool, API: b.api,
		Portal: &console.Portal{Links: portallink.Store{Pool: b.pool}, FrameAncestors: ancestors}}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	s := httptest.NewServer(srv.Engine)
	t.Cleanup(s.Close)
	return s
}

// operatorPage is a page of the operator's own product, on another site:
// it frames the URL its query names.
func operatorPage(t *testing.T) *httptest.Server {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><html lang="en"><title>Operator</title><h1>Your webhooks</h1>
<iframe id="portal" title="Webhooks portal" src="%s" width="1280" height="800"></iframe></html>`, stdhtml.EscapeString(r.URL.Query().Get("frame")))
	}))
	t.Cleanup(s.Close)
	return s
}

// onLocalhost is s's URL on localhost: another site than 127.0.0.1 for
// the browser, so the portal in its frame is a third party.
func onLocalhost(s *httptest.Server) string {
	return strings.Replace(s.URL, "127.0.0.1", "localhost", 1)
}

// mintLink asks the admin API for a portal link with an operate token.
func (b *bundle) mintLink(t *testing.T, token, tenant, scope, access string) admin.PortalLinkCreated {
	t.Helper()
	var link admin.PortalLinkCreated
	b.apiPost(t, token, "/tenants/"+tenant+"/portal-links", map[string]string{"scope": scope, "access": access}, &link)
	return link
}

// framed is the document of the operator page's frame, once its h1 reads
// want and it holds each of with (the frame navigates: its node is asked
// for again each time).
func framed(t *testing.T, ctx context.Context, want string, with ...string) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	var last string
	for time.Now().Before(deadline) {
		var frames []*cdp.Node
		if err := chromedp.Run(ctx, chromedp.Nodes(`iframe#portal`, &frames, chromedp.ByQuery)); err != nil {
			t.Fatal(err)
		}
		var h1, doc string
		try, cancel := context.WithTimeout(ctx, time.Second)
		err := chromedp.Run(try, chromedp.Text(`h1`, &h1, chromedp.ByQuery, chromedp.FromNode(frames[0])),
			chromedp.OuterHTML(`html`, &doc, chromedp.ByQuery, chromedp.FromNode(frames[0])))
		cancel()
		if err == nil && strings.TrimSpace(h1) == want && !slices.ContainsFunc(with, func(w string) bool { return !strings.Contains(doc, w) }) {
			return doc
		}
		last = h1
	}
	t.Fatalf("the frame's page never read %q (last %q)", want, last)
	return ""
}

// A portal link minted through the admin API with an operate token, opened
// in a frame of the operator's page on another site (the page on
// localhost, the portal on 127.0.0.1: a third party, whose cookies only
// work Partitioned), shows that tenant's destinations only and acts on
// them; a second use and an expired link are refused, and a page from an
// origin the deployment does not name cannot frame the portal. Every use
// is audited.
func TestPortalLinkWorksInAnotherSitesFrame(t *testing.T) {
	t.Parallel()
	b := setup(t)
	own, other := b.newWorld(t), b.newWorld(t)
	named, unnamed := operatorPage(t), operatorPage(t)
	portal := b.portalServer(t, onLocalhost(named))
	_, operator := b.token(t, admintoken.RoleOperate, own.tenant)
	// Third-party cookies blocked, as browsers move to: only a Partitioned
	// cookie reaches the framed portal. Site isolation off, so the test
	// can read the cross-site frame's document.
	ctx := browser(t, chromedp.Flag("test-third-party-cookie-phaseout", true), chromedp.Flag("disable-site-isolation-trials", true))
	open := func(parent *httptest.Server, link admin.PortalLinkCreated) {
		t.Helper()
		frame := portal.URL + link.URL
		if err := chromedp.Run(ctx, chromedp.Navigate(onLocalhost(parent)+"/?"+url.Values{"frame": {frame}}.Encode())); err != nil {
			t.Fatal(err)
		}
	}

	link := b.mintLink(t, operator, own.tenant, "destinations", "manage")
	open(named, link)
	page := framed(t, ctx, "Destinations")
	contains(t, "the framed portal", page, "https://receiver.example/"+strings.TrimPrefix(own.account, "acct_"), "manage portal")
	for _, leak := range []string{"https://receiver.example/" + strings.TrimPrefix(other.account, "acct_"), console.Prefix + "/events", console.Prefix + "/sources"} {
		if strings.Contains(page, leak) {
			t.Errorf("the destinations portal shows %q", leak)
		}
	}
	var frames []*cdp.Node
	if err := chromedp.Run(ctx, chromedp.Nodes(`iframe#portal`, &frames, chromedp.ByQuery)); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Run(ctx, chromedp.Click(`button[data-op="endpoint.disable"]`, chromedp.ByQuery, chromedp.FromNode(frames[0]))); err != nil {
		t.Fatal(err)
	}
	framed(t, ctx, "Destinations", "Endpoint disabled.")
	if !b.endpointDisabled(t, own.endpoint) {
		t.Errorf("the portal's Disable left endpoint %s enabled", own.endpoint)
	}
	if b.endpointDisabled(t, other.endpoint) {
		t.Errorf("the other tenant's endpoint was disabled")
	}

	// A read-only link: the same pages, no action.
	open(named, b.mintLink(t, operator, own.tenant, "destinations", "read"))
	if page := framed(t, ctx, "Destinations", "read-only portal"); strings.Contains(page, "data-op=") {
		t.Errorf("a read-only portal offers actions")
	}

	// The first link again: refused, and the session is not renewed.
	open(named, link)
	if page := framed(t, ctx, "Link refused"); !strings.Contains(page, "used already") {
		t.Errorf("a second use: %.500s", page)
	}
	// An expired link.
	expired := b.mintLink(t, operator, own.tenant, "tenant", "read")
	if _, err := b.pool.Exec(t.Context(), `UPDATE portal_links SET expires_at = now() - interval '1 second' WHERE id = $1`, expired.ID); err != nil {
		t.Fatal(err)
	}
	open(named, expired)
	if page := framed(t, ctx, "Link refused"); !strings.Contains(page, "expired unused") {
		t.Errorf("an expired link: %.500s", page)
	}
	// A page the deployment does not name cannot frame the portal: the
	// browser refuses the frame, so its link is never used.
	unused := b.mintLink(t, operator, own.tenant, "destinations", "read")
	open(unnamed, unused)
	b.waitBlockedFrame(t, ctx)
	var usedAt *time.Time
	if err := b.pool.QueryRow(t.Context(), `SELECT used_at FROM portal_links WHERE id = $1`, unused.ID).Scan(&usedAt); err != nil || usedAt != nil {
		t.Errorf("a link framed by an unnamed origin was used at %v (%v)", usedAt, err)
	}

	var trail string
	err := b.pool.QueryRow(t.Context(), `SELECT string_agg(target_id || ' ' || action || ':' || outcome, ', ' ORDER BY id) FROM admin_audit
WHERE resource = 'portal_link' AND action = 'portal_link.use' AND tenant_id = $1`, own.tenant).Scan(&trail)
	want := link.ID + " portal_link.use:ok, " + link.ID + " portal_link.use:conflict, " + expired.ID + " portal_link.use:forbidden"
	if err != nil || !strings.HasPrefix(trail, link.ID+" portal_link.use:ok, ") || !strings.HasSuffix(trail, link.ID+" portal_link.use:conflict, "+expired.ID+" portal_link.use:forbidden") {
		t.Errorf("audited uses: %q %v, want %q", trail, err, want)
	}
}

// waitBlockedFrame waits until the browser has refused the frame (its
// document is Chromium's error page, not the portal's).
func (b *bundle) waitBlockedFrame(t *testing.T, ctx context.Context) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		var frames []*cdp.Node
		var doc string
		if err := chromedp.Run(ctx, chromedp.Nodes(`iframe#portal`, &frames, chromedp.ByQuery)); err != nil {
			t.Fatal(err)
		}
		try, cancel := context.WithTimeout(ctx, time.Second)
		err := chromedp.Run(try, chromedp.OuterHTML(`html`, &doc, chromedp.ByQuery, chromedp.FromNode(frames[0])))
		cancel()
		if err == nil && strings.Contains(doc, "refused to connect") {
			return
		}
	}
	t.Fatal("the frame of an unnamed origin was not refused")
}

func (b *bundle) endpointDisabled(t *testing.T, id string) bool {
	t.Helper()
	var disabled bool
	if err := b.pool.QueryRow(t.Context(), `SELECT disabled_at IS NOT NULL FROM endpoints WHERE id = $1`, id).Scan(&disabled); err != nil {
		t.Fatal(err)
	}
	return disabled
}

// What a deployment names for the portal cannot add to its CSP: only
// origins frame it, only an https logo's origin is an image source, only a
// colour colours it.
func TestPortalSettingsAreOriginsAndColoursOnly(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{"*", "'none'", "https://a.example; script-src *", "https://a.example/path", "javascript:alert(1)",
		"https://a.example ", "https://user@a.example", "https://a.example/", "a.example"} {
		if console.CheckFrameAncestors([]string{bad}) == nil {
			t.Errorf("frame ancestor %q accepted", bad)
		}
	}
	if err := console.CheckFrameAncestors([]string{"https://app.example.com", "http://localhost:8080", "https://*.example.com"}); err != nil {
		t.Error(err)
	}
	for _, bad := range []console.Brand{{LogoURL: "http://a.example/logo.png"}, {LogoURL: "https://a.example/x.png; script-src *"},
		{Accent: "red;}body{display:none"}, {Accent: "#12345"}} {
		if console.CheckBrand(bad) == nil {
			t.Errorf("brand %+v accepted", bad)
		}
	}

	b := setup(t)
	srv := listen.NewPublic("127.0.0.1:0", slog.New(slog.DiscardHandler), nil, false)
	brand := console.Brand{Name: "Acme Webhooks", LogoURL: "https://cdn.acme.example/logo.svg", Accent: "#aa3300"}
	if _, err := console.Register(srv.Engine, console.Config{Pool: b.pool, API: b.api,
		Portal: &console.Portal{Links: portallink.Store{Pool: b.pool}, Brand: brand}}, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	portal := httptest.NewServer(srv.Engine)
	t.Cleanup(portal.Close)
	resp, err := http.Get(portal.URL + portallink.OpenPath)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	csp := resp.Header.Get("Content-Security-Policy")
	if !strings.Contains(csp, "img-src 'self' data: https://cdn.acme.example;") || !strings.Contains(csp, "frame-ancestors 'none';") ||
		resp.Header.Get("X-Frame-Options") != "DENY" {
		t.Errorf("a portal no origin may frame: CSP %q, X-Frame-Options %q", csp, resp.Header.Get("X-Frame-Options"))
	}
	contains(t, "the branded open page", string(page), "<title>Opening the portal · Acme Webhooks</title>", `src="https://cdn.acme.example/logo.svg"`,
		console.Prefix+"/brand.css")
	resp, err = http.Get(portal.URL + console.Prefix + "/brand.css")
	if err != nil {
		t.Fatal(err)
	}
	css, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(css) != ":root { --accent: #aa3300; }\n" {
		t.Errorf("brand.css: %q", css)
	}
}
