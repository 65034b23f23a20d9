package main

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"slices"
	"time"

	"github.com/chromedp/chromedp"
)

// Targets of the console's pages at 1,000,000 inbox rows (issue 31).
const (
	consoleServerTarget     = 100 * time.Millisecond
	consoleNavigationTarget = 300 * time.Millisecond
)

// consolePages measures the console's pages (command/internal/operator/console's
// BenchmarkPagesAtVolume, the same way) over the search step's inbox, as
// `sluice serve` serves them on its admin listener: each page's server p95
// over 30 requests (a client on the host, to the last byte) and Chromium's
// navigation to the load event p95 over 10, for an unscoped token and one
// of a tenant; the table keeps the worst page of each.
func (b *bench) consolePages(ctx context.Context) error {
	if err := b.fillSearch(ctx); err != nil {
		return err
	}
	p, err := b.startSluice("serve", b.stageAddr, b.slot("console"))
	if err != nil {
		return err
	}
	defer func() {
		p.terminate()
		if _, err := b.pool.Exec(context.WithoutCancel(ctx), `SELECT pg_drop_replication_slot($1)`, b.slot("console")); err != nil {
			log.Printf("console: drop slot: %v", err)
		}
	}()
	tenant := b.sources[0].tenantID
	var inboxID int64
	if err := b.pool.QueryRow(ctx, `SELECT id FROM inbox WHERE tenant_id = $1 ORDER BY id DESC LIMIT 1`, tenant).Scan(&inboxID); err != nil {
		return fmt.Errorf("an event of the tenant: %w", err)
	}
	pages := []string{"/", "/events", "/events?object_id=in_search_4711", "/events?event_id=evt_search_99999", "/events?status=quarantined",
		fmt.Sprintf("/events/%d", inboxID), "/dead-letters", "/conflicts", "/sources", "/destinations?tenant_id=" + tenant, "/deliveries",
		"/audit", "/reconciliation", "/sources/" + b.sources[0].sourceID, "/event-types"}
	base := "http://" + b.adminAddr + "/console"
	var worstServer, worstNav time.Duration
	for _, scope := range []string{"", tenant} {
		server, nav, err := b.consoleAs(ctx, base, scope, pages)
		if err != nil {
			return err
		}
		worstServer, worstNav = max(worstServer, server), max(worstNav, nav)
	}
	b.results["console_server_p95_ms"], b.results["console_navigation_p95_ms"] = ms(worstServer), ms(worstNav)
	if worstServer > consoleServerTarget || worstNav > consoleNavigationTarget {
		b.note("console: a page missed its target (server p95 %s, navigation p95 %s; see the log)", worstServer, worstNav)
	}
	return nil
}

// consoleAs signs a client and a browser in with a new token of tenant
// (empty: every tenant) and measures each page, returning the worst p95s.
func (b *bench) consoleAs(ctx context.Context, base, tenant string, pages []string) (time.Duration, time.Duration, error) {
	who := "unscoped"
	if tenant != "" {
		who = "scoped"
	}
	token, err := b.adminToken(ctx, tenant, "bench console "+who)
	if err != nil {
		return 0, 0, fmt.Errorf("console token: %w", err)
	}
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 30 * time.Second}
	resp, err := c.PostForm(base+"/sign-in", url.Values{"token": {token}})
	if err != nil {
		return 0, 0, fmt.Errorf("console sign-in: %w", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK { // the redirect to the overview, followed
		return 0, 0, fmt.Errorf("console sign-in: %s", resp.Status)
	}
	bctx, done, err := consoleBrowser(ctx, base, token)
	if err != nil {
		return 0, 0, err
	}
	defer done()
	var worstServer, worstNav time.Duration
	for _, page := range pages {
		server, err := p95Of(30, func() (time.Duration, error) { return timeGet(c, base+page) })
		if err != nil {
			return 0, 0, err
		}
		nav, err := p95Of(10, func() (time.Duration, error) { return navigate(bctx, base+page) })
		if err != nil {
			return 0, 0, err
		}
		log.Printf("console %-8s %-45s server p95 %6.1f ms   navigation p95 %6.1f ms", who, page, ms(server), ms(nav))
		worstServer, worstNav = max(worstServer, server), max(worstNav, nav)
	}
	return worstServer, worstNav, nil
}

func timeGet(c *http.Client, u string) (time.Duration, error) {
	start := time.Now()
	resp, err := c.Get(u)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	return time.Since(start), nil
}

// navigate loads u in the browser and returns the navigation's time to its
// load event.
func navigate(ctx context.Context, u string) (time.Duration, error) {
	var took float64
	err := chromedp.Run(ctx, chromedp.Navigate(u),
		chromedp.Evaluate(`performance.getEntriesByType('navigation')[0].loadEventEnd`, &took))
	return time.Duration(took * float64(time.Millisecond)), err
}

func p95Of(n int, run func() (time.Duration, error)) (time.Duration, error) {
	took := make([]time.Duration, n)
	for i := range took {
		d, err := run()
		if err != nil {
			return 0, err
		}
		took[i] = d
	}
	slices.Sort(took)
	return took[(n*95+99)/100-1], nil
}

// consoleBrowser starts Debian's headless Chromium (make chromium) and
// signs it in with token through the sign-in form.
func consoleBrowser(ctx context.Context, base, token string) (context.Context, func(), error) {
	profile, err := os.MkdirTemp("", "bench-chromium-")
	if err != nil {
		return nil, nil, err
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, chromedp.ExecPath("/usr/bin/chromium"), chromedp.UserDataDir(profile),
		chromedp.Flag("headless", true), chromedp.Flag("no-sandbox", true), chromedp.Flag("disable-gpu", true),
		chromedp.Flag("no-first-run", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-dev-shm-usage", true))
	bctx, cancel := chromedp.NewContext(actx)
	done := func() { cancel(); cancelAlloc(); _ = os.RemoveAll(profile) }
	err = chromedp.Run(bctx, chromedp.Navigate(base+"/"),
		chromedp.WaitVisible(`#token`, chromedp.ByID),
		chromedp.SendKeys(`#token`, token, chromedp.ByID),
		chromedp.Submit(`#token`, chromedp.ByID),
		chromedp.WaitVisible(`nav[aria-label="Pages"]`))
	if err != nil {
		done()
		return nil, nil, fmt.Errorf("console: the browser's sign-in (is Chromium installed? make chromium): %w", err)
	}
	return bctx, done, nil
}
