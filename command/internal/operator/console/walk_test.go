package console_test

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluicehq/sluice/command/internal/operator/admintoken"
	"github.com/sluicehq/sluice/command/internal/operator/console"
	"github.com/sluicehq/sluice/command/internal/operator/operate"
	"github.com/sluicehq/sluice/internal/envelope"
	"github.com/sluicehq/sluice/internal/testenv"
)

// axeVersion is dev/console/axe/package-lock.json's; the Makefile installs
// it under .run/tools/ (SLUICE_AXE names another axe.min.js).
const axeVersion = "4.14.1"

func axeScript(t *testing.T) string {
	t.Helper()
	path := os.Getenv("SLUICE_AXE")
	if path == "" {
		path = filepath.Join("..", "..", "..", "..", ".run", "tools", "axe-core-"+axeVersion, "node_modules", "axe-core", "axe.min.js")
	}
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("axe-core is not installed (bash dev/console/axe/install.sh .run/tools/axe-core-%s): %v", axeVersion, err)
	}
	return string(src)
}

// TestEveryPageIsAccessible walks every page of the console, signed in as
// an operator, in Chromium: each renders (a heading, no error), axe-core
// finds no serious or critical violation, and every link, button and
// field is reached by the keyboard (Tab) in order. With
// SLUICE_CONSOLE_SCREENSHOTS set (make console-screenshots) it writes a
// PNG of each page there.
func TestEveryPageIsAccessible(t *testing.T) {
	t.Parallel()
	axe := axeScript(t)
	topics := envelope.Topics{Prefix: "consolewalk" + testenv.RandomSuffix()}
	reg := prometheus.NewRegistry()
	answers := prometheus.NewCounterVec(prometheus.CounterOpts{Name: operate.IngestAnswersMetric, Help: "h"}, []string{"kind", "code", "outcome"})
	reg.MustRegister(answers)
	answers.WithLabelValues("stripe", "202", "accepted")
	b := setupProcess(t, process{kafka: kafkaAdmin(t), topics: topics, metrics: reg, ingests: true})
	w := b.newWorld(t)
	b.newWorld(t)
	// The overview's charts: two samples of this process.
	b.op.Sample(t.Context(), time.Now().Add(-time.Minute))
	answers.WithLabelValues("stripe", "202", "accepted").Add(7)
	b.op.Sample(t.Context(), time.Now())
	_, token := b.token(t, admintoken.RoleOperate, "")
	_ = b.everyState(t, w, token)
	shots := os.Getenv("SLUICE_CONSOLE_SCREENSHOTS")
	if shots != "" {
		if err := os.MkdirAll(shots, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ctx := browser(t)
	if err := chromedp.Run(ctx, chromedp.EmulateViewport(1280, 900)); err != nil {
		t.Fatal(err)
	}
	b.walkPage(t, ctx, axe, shots, "sign-in", console.Prefix+"/sign-in")
	b.browserSignIn(t, ctx, token)
	conflict := b.firstLink(t, ctx, console.Prefix+"/conflicts", console.Prefix+"/conflicts/")
	window := url.Values{"since": {time.Now().UTC().Add(-time.Hour).Format(time.RFC3339)}, "until": {time.Now().UTC().Add(time.Minute).Format(time.RFC3339)}}
	for name, path := range map[string]string{
		"overview": "/", "events": "/events", "trail": "/events/" + w.inboxID, "payload": "/events/" + w.inboxID + "/payload",
		"dead-letters": "/dead-letters", "replay": "/dead-letters/" + w.deadLetter + "/replay",
		"replay-set": "/dead-letters/replay?reason=workspace", "dead-letters-filtered": "/dead-letters?group=sluice.credits&replayed=true", "conflicts": "/conflicts", "conflict": strings.TrimPrefix(conflict, console.Prefix),
		"sources": "/sources", "event-types": "/event-types?tenant_id=" + w.tenant, "destinations": "/destinations?tenant_id=" + w.tenant,
		"deliveries": "/deliveries", "reconciliation": "/reconciliation", "audit": "/audit", "consumer-groups": "/consumer-groups",
		"consumer-group":   "/consumer-groups/" + topics.Resource("credits"),
		"delivery":         "/deliveries/" + w.delivery,
		"delivery-request": "/deliveries/" + w.delivery + "/request",
		"endpoint":         "/destinations/" + w.endpoint,
		"event-type":       "/event-types/" + w.tenant + "/api/" + worldType,
		"source":           "/sources/" + w.source,
		"replay-window":    "/destinations/" + w.endpoint + "/replay?" + window.Encode(),
		"retry-dead":       "/destinations/" + w.endpoint + "/retry-dead?" + window.Encode(),
		"tenant-pick":      "/dead-letters?tenant_id=t-",
	} {
		t.Run(name, func(t *testing.T) { b.walkPage(t, ctx, axe, shots, name, console.Prefix+path) })
	}
	// The pages that answer a form: a reconciliation's dry run (of a source
	// with a Stripe API that answers), a test event's.
	reconciled := b.stripeSource(t, w)
	t.Run("reconcile-dry-run", func(t *testing.T) {
		err := chromedp.Run(ctx, chromedp.Navigate(b.srv.URL+console.Prefix+"/sources/"+reconciled),
			chromedp.Click(`form[aria-label="Reconcile"] button`), chromedp.WaitVisible(`button.danger`))
		if err != nil {
			t.Fatal(err)
		}
		b.checkPage(t, ctx, axe, shots, "reconcile-dry-run", "the dry run's report")
	})
	t.Run("test-event", func(t *testing.T) {
		err := chromedp.Run(ctx, chromedp.Navigate(b.srv.URL+console.Prefix+"/destinations?tenant_id="+w.tenant),
			chromedp.Click(`form[action$="/destinations/`+w.endpoint+`/test"] button`), chromedp.WaitVisible(`dl.figures`))
		if err != nil {
			t.Fatal(err)
		}
		b.checkPage(t, ctx, axe, shots, "test-event", "the test event's answer")
	})
	// The tenant's view through a portal link: the portal's own listener,
	// a link minted by the API, used once by its page's script.
	t.Run("portal", func(t *testing.T) { b.walkPortal(t, ctx, axe, shots, w, token) })
}

// walkPortal opens a portal link of w's tenant (destinations, manage) and
// checks the pages its visitor sees: the destinations and an endpoint.
func (b *bundle) walkPortal(t *testing.T, ctx context.Context, axe, shots string, w world, operator string) {
	t.Helper()
	portal := b.portalServer(t)
	link := b.mintLink(t, operator, w.tenant, "destinations", "manage")
	if err := chromedp.Run(ctx, chromedp.Navigate(portal.URL+link.URL), chromedp.WaitVisible(`a[href="`+console.Prefix+`/destinations/`+w.endpoint+`"]`)); err != nil {
		t.Fatalf("the portal link: %v", err)
	}
	b.checkPage(t, ctx, axe, shots, "portal-destinations", "the portal's destinations")
	for name, path := range map[string]string{"portal-endpoint": "/destinations/" + w.endpoint, "portal-delivery": "/deliveries/" + w.delivery} {
		if err := chromedp.Run(ctx, chromedp.Navigate(portal.URL+console.Prefix+path)); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		b.checkPage(t, ctx, axe, shots, name, "the portal's "+path)
	}
}

// firstLink is the first link under prefix on the page at path.
func (b *bundle) firstLink(t *testing.T, ctx context.Context, path, prefix string) string {
	t.Helper()
	var href string
	err := chromedp.Run(ctx, chromedp.Navigate(b.srv.URL+path),
		chromedp.AttributeValue(`a[href^="`+prefix+`"]`, "href", &href, nil))
	if err != nil {
		t.Fatal(err)
	}
	return href
}

type axeResult struct {
	ID     string `json:"id"`
	Impact string `json:"impact"`
	Help   string `json:"help"`
	Nodes  []struct {
		Target []any `json:"target"`
	} `json:"nodes"`
}

func (b *bundle) walkPage(t *testing.T, ctx context.Context, axe, shots, name, path string) {
	t.Helper()
	if err := chromedp.Run(ctx, chromedp.Navigate(b.srv.URL+path)); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	b.checkPage(t, ctx, axe, shots, name, path)
}

// checkPage checks the page the browser shows (path names it in errors):
// it renders, axe-core finds nothing serious, Tab reaches every control.
func (b *bundle) checkPage(t *testing.T, ctx context.Context, axe, shots, name, path string) {
	t.Helper()
	var h1 string
	var errs int
	err := chromedp.Run(ctx, chromedp.WaitVisible(`h1`),
		chromedp.Text(`h1`, &h1), chromedp.Evaluate(`document.querySelectorAll('p.error').length`, &errs))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if h1 == "" || errs > 0 || h1 == "Not found" || h1 == "Error" {
		t.Errorf("%s renders %q with %d errors", path, h1, errs)
	}
	if shots != "" {
		var png []byte
		if err := chromedp.Run(ctx, chromedp.FullScreenshot(&png, 100)); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(shots, name+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if dir := os.Getenv("SLUICE_CONSOLE_DOCS"); dir != "" && docShots[name] {
		docShot(t, ctx, filepath.Join(dir, name+".png"))
	}
	// axe-core, injected past the page's CSP (only the test does so).
	b.axeClean(t, ctx, axe, path)
	b.tabThrough(t, ctx, path)
}

// tabThrough presses Tab from the top of the page and checks that focus
// visits every focusable element (links, buttons, fields) in turn.
func (b *bundle) tabThrough(t *testing.T, ctx context.Context, path string) {
	t.Helper()
	var n int
	err := chromedp.Run(ctx, chromedp.Evaluate(`(() => {
  const els = [...document.querySelectorAll('a[href], button, input:not([type=hidden]), select, textarea')].filter(e => !e.disabled);
  els.forEach((e, i) => e.setAttribute('data-k', String(i)));
  document.activeElement && document.activeElement.blur();
  window.scrollTo(0, 0);
  return els.length;
})()`, &n))
	if err != nil {
		t.Fatal(err)
	}
	reached := map[string]bool{}
	for range n + 2 {
		var k string
		if err := chromedp.Run(ctx, chromedp.KeyEvent(kb.Tab),
			chromedp.Evaluate(`document.activeElement ? (document.activeElement.getAttribute('data-k') || '') : ''`, &k)); err != nil {
			t.Fatal(err)
		}
		if k != "" {
			reached[k] = true
		}
	}
	for i := range n {
		if !reached[fmt.Sprint(i)] {
			var what string
			_ = chromedp.Run(ctx, chromedp.Evaluate(fmt.Sprintf(`document.querySelector('[data-k="%d"]').outerHTML`, i), &what))
			t.Errorf("%s: Tab never reaches %.200s", path, what)
		}
	}
}

// docShots are the pages docs/console.md shows, as a window of 1280x900
// shows them.
var docShots = map[string]bool{"overview": true, "trail": true, "dead-letters": true, "replay-set": true, "destinations": true, "endpoint": true, "delivery": true,
	"portal-destinations": true, "portal-endpoint": true}

// docShot writes the window's screenshot to path unless the one there
// already differs from it in under 5% of its pixels (times and ids of the
// test's data): the docs' PNGs change when their page does, not on every
// run.
func docShot(t *testing.T, ctx context.Context, path string) {
	t.Helper()
	var shot []byte
	if err := chromedp.Run(ctx, chromedp.CaptureScreenshot(&shot)); err != nil {
		t.Fatal(err)
	}
	if old, err := os.ReadFile(path); err == nil && pixelsDiffer(t, old, shot) < 0.05 {
		return
	}
	if err := os.WriteFile(path, shot, 0o644); err != nil {
		t.Fatal(err)
	}
}

// pixelsDiffer is the share of pixels that differ between two PNGs (1: not
// the same size).
func pixelsDiffer(t *testing.T, a, b []byte) float64 {
	t.Helper()
	ia, err := png.Decode(bytes.NewReader(a))
	if err != nil {
		return 1
	}
	ib, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	r := ia.Bounds()
	if r != ib.Bounds() {
		return 1
	}
	var differ int
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if ia.At(x, y) != ib.At(x, y) {
				differ++
			}
		}
	}
	return float64(differ) / float64(r.Dx()*r.Dy())
}
