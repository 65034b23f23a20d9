package console_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/sluicehq/sluice/command/internal/operator/admin"
	"github.com/sluicehq/sluice/command/internal/operator/admintoken"
	"github.com/sluicehq/sluice/command/internal/operator/console"
	"github.com/sluicehq/sluice/internal/envelope"
	"github.com/sluicehq/sluice/internal/store/tenancy"
	"github.com/sluicehq/sluice/internal/testenv"
)

// TestEveryPageReadsAsMadeForPeople walks the console as a person would,
// as an operator and as a tenant-scoped token, in a 1280x800 window: from
// the overview, every page its links reach (one of each kind of page),
// over a world with something in every state (a conflict, pending and
// replayed dead letters, enabled and disabled sources and endpoints, dead
// and delivered deliveries, an active and a deprecated event type, a
// reconciliation run that recovered an event). Every page must fit the
// window, name its columns in words, show no raw JSON, ISO time or bare
// true/false/null in a cell, offer no action its row's state forbids,
// carry its links' filters to the server intact, and pass axe-core with
// no serious or critical violation.
func TestEveryPageReadsAsMadeForPeople(t *testing.T) {
	t.Parallel()
	axe := axeScript(t)
	topics := envelope.Topics{Prefix: "consolepeople" + testenv.RandomSuffix()}
	b := setupProcess(t, process{kafka: kafkaAdmin(t), topics: topics, ingests: true})
	w := b.newWorld(t)
	_, operator := b.token(t, admintoken.RoleOperate, "")
	first := b.everyState(t, w, operator)
	_, tenant := b.token(t, admintoken.RoleOperate, w.tenant)
	for _, who := range []struct{ name, token string }{{"operator", operator}, {"tenant", tenant}} {
		t.Run(who.name, func(t *testing.T) {
			ctx := browser(t)
			if err := chromedp.Run(ctx, chromedp.EmulateViewport(1280, 800)); err != nil {
				t.Fatal(err)
			}
			b.browserSignIn(t, ctx, who.token)
			visited := b.walk(t, ctx, axe, first...)
			for _, want := range []string{"/deliveries/{}", "/events/{}", "/sources/{}", "/conflicts/{}", "/event-types/{}/api/{}", "/dead-letters/{}/replay"} {
				if !slices.Contains(visited, want) {
					t.Errorf("the walk never reached a page %s (it saw %v)", want, visited)
				}
			}
		})
	}
}

// everyState adds to w what its pages lack for a state each: a replayed
// dead letter, a delivered delivery, a disabled source and endpoint, a
// deprecated event type, and a reconciliation run (through the API, with
// an operator's token) that recovered a missed event. It returns the
// pages a walk starts from: the delivered delivery (a failed request of it
// answered JSON) and the recovered event's trail.
func (b *bundle) everyState(t *testing.T, w world, token string) []string {
	t.Helper()
	ctx := t.Context()
	if _, err := b.pool.Exec(ctx, `
INSERT INTO dead_letters (consumer_group, topic, partition, "offset", key, headers, payload, reason, attempts, first_failed_at, last_failed_at, replayed_at)
SELECT consumer_group, topic, partition, "offset" + 1000000, key, headers, payload, 'timed out writing the grant', 5,
       now(), now(), now()
FROM dead_letters WHERE id = $1`, w.deadLetter); err != nil {
		t.Fatal(err)
	}
	var delivered int64
	if err := b.pool.QueryRow(ctx, `
WITH d AS (
	INSERT INTO deliveries (endpoint_id, tenant_id, webhook_id, partition_key, state, attempts, last_status, latency_ms, delivered_at,
	                        inbox_id, event_id, event_type, source, topic, partition, "offset")
	SELECT endpoint_id, tenant_id, webhook_id || '_2', partition_key, 'delivered', 2, 200, 31, now(), inbox_id, event_id, event_type, source, topic, partition, "offset" + 1
	FROM deliveries WHERE id = $1
	RETURNING id, endpoint_id
)
INSERT INTO delivery_attempts (delivery_id, attempt, endpoint_id, status, latency_ms, error_class, error, answer)
SELECT id, 1, endpoint_id, 503, 40, 'status', 'status 503', '{"error":"busy","retry":true}' FROM d
RETURNING delivery_id`, w.delivery).Scan(&delivered); err != nil {
		t.Fatal(err)
	}
	// The endpoint's last day as the deliverer counts it: requests every
	// hour, a bad hour among them.
	if _, err := b.pool.Exec(ctx, `
INSERT INTO delivery_minutes (endpoint_id, minute, attempts, delivered, failed, answered, latency_ms_sum, le_50, le_100, le_250, le_500)
SELECT $1, date_trunc('minute', now()) - h * interval '1 hour', 40 + (h * 7) % 23, 40 + (h * 7) % 23 - CASE WHEN h = 5 THEN 12 ELSE h % 3 END,
       CASE WHEN h = 5 THEN 12 ELSE h % 3 END, 40 + (h * 7) % 23, 3000, 10, 20 + (h * 7) % 23, 8, 2
FROM generate_series(0, 23) h`, w.endpoint); err != nil {
		t.Fatal(err)
	}
	off, err := b.store.CreateSource(ctx, tenancy.NewSource{TenantID: w.tenant, Kind: "github", Account: "octo-" + testenv.RandomSuffix(), Secret: "s3cret"})
	if err != nil {
		t.Fatal(err)
	}
	b.apiPost(t, token, "/sources/"+off+"/disable", struct{}{}, nil)
	var ep struct {
		ID string `json:"id"`
	}
	b.apiPost(t, token, "/tenants/"+w.tenant+"/endpoints", map[string]any{"url": "https://gone.example/hook", "filters": []string{"*"}}, &ep)
	b.apiPost(t, token, "/endpoints/"+ep.ID+"/disable", struct{}{}, nil)
	b.apiPost(t, token, "/tenants/"+w.tenant+"/event-types", admin.NewEventTypeBody{Kind: "api", Type: "order.cancelled",
		Schema: json.RawMessage(`{"type":"object"}`), ResourceType: "order"}, nil)
	b.apiPost(t, token, "/tenants/"+w.tenant+"/event-types/api/order.cancelled/deprecate", struct{}{}, nil)
	source := b.stripeSource(t, w)
	b.apiPost(t, token, "/sources/"+source+"/reconcile", map[string]any{"dry_run": false,
		"since": time.Now().Add(-time.Hour).UTC().Format(time.RFC3339), "until": time.Now().UTC().Format(time.RFC3339)}, nil)
	var recovered int64
	if err := b.pool.QueryRow(ctx, `SELECT id FROM inbox WHERE source_id = $1 AND event_id = $2`, source, missedEvent(source)).Scan(&recovered); err != nil {
		t.Fatal(err)
	}
	return []string{console.Prefix + "/deliveries/" + strconv.FormatInt(delivered, 10), console.Prefix + "/events/" + strconv.FormatInt(recovered, 10)}
}

// apiPost asks the admin API with token; out, when not nil, is filled
// from the answer.
func (b *bundle) apiPost(t *testing.T, token, path string, in, out any) {
	t.Helper()
	raw, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, b.srv.URL+admin.Prefix+path, bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		t.Fatalf("POST %s: %d %s", path, resp.StatusCode, body)
	}
	if out != nil {
		if err := json.Unmarshal(body, out); err != nil {
			t.Fatal(err)
		}
	}
}

// kindOfPage names a console URL by its kind: its path with ids as {}, and
// its query's names (a list filtered is another kind than the list).
var idSegment = regexp.MustCompile(`^([0-9]+|[0-9a-f]{8}-[0-9a-f-]{27}|[0-9]+\.[0-9T:.Z+-]+|[A-Za-z0-9_.-]*[0-9][A-Za-z0-9_.-]*)$`)

func kindOfPage(u *url.URL) string {
	segs := strings.Split(strings.TrimPrefix(u.Path, console.Prefix), "/")
	for i, s := range segs {
		if idSegment.MatchString(s) || (i == 4 && segs[1] == "event-types") {
			segs[i] = "{}"
		}
	}
	kind := strings.Join(segs, "/")
	var names []string
	for k := range u.Query() {
		if k != "notice" {
			names = append(names, k)
		}
	}
	slices.Sort(names)
	if len(names) > 0 {
		kind += "?" + strings.Join(names, "&")
	}
	return kind
}

// maxPages bounds a walk: one page of each kind is far fewer.
const maxPages = 80

// walk follows the console's own links from the overview, breadth first,
// one page of each kind, checking each (checkMadeForPeople, axe-core), and
// returns the kinds of page it saw. It starts from first, then from the
// overview, and from lists a person filtered a page at a time, so their
// next pages and filtered replay are followed too.
func (b *bundle) walk(t *testing.T, ctx context.Context, axe string, first ...string) []string {
	t.Helper()
	queue := append(first, console.Prefix+"/",
		console.Prefix+"/dead-letters?group=sluice.credits&replayed=true&limit=1",
		console.Prefix+"/events?limit=1",
		console.Prefix+"/conflicts?limit=1",
		console.Prefix+"/deliveries?state=dead&since="+url.QueryEscape(time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)))
	seen := map[string]bool{}
	var kinds []string
	for len(queue) > 0 && len(kinds) < maxPages {
		next := queue[0]
		queue = queue[1:]
		u, err := url.Parse(next)
		if err != nil {
			t.Errorf("a link %q: %v", next, err)
			continue
		}
		kind := kindOfPage(u)
		if seen[kind] {
			continue
		}
		seen[kind] = true
		kinds = append(kinds, kind)
		var links []string
		err = chromedp.Run(ctx, chromedp.Navigate(b.srv.URL+next), chromedp.WaitVisible(`h1`),
			chromedp.Evaluate(`[...document.querySelectorAll('a[href]')].map(a => a.getAttribute('href'))`, &links))
		if err != nil {
			t.Fatalf("%s: %v", next, err)
		}
		for _, p := range b.checkMadeForPeople(t, ctx, next) {
			t.Errorf("%s: %s", next, p)
		}
		b.axeClean(t, ctx, axe, next)
		for _, l := range links {
			if strings.HasPrefix(l, console.Prefix) && !strings.HasPrefix(l, console.Prefix+"/static/") {
				queue = append(queue, l)
			}
		}
	}
	if len(kinds) >= maxPages {
		t.Errorf("the walk stopped at %d kinds of page: %v", maxPages, kinds)
	}
	t.Logf("walked %d kinds of page: %v", len(kinds), kinds)
	return kinds
}

// forbidden are the actions (data-op) a row in a state (data-state) must
// not offer.
var forbidden = map[string][]string{
	"enabled":    {"source.enable", "endpoint.enable", "endpoint.resume"},
	"disabled":   {"source.disable", "endpoint.disable", "endpoint.test", "endpoint.pause", "endpoint.resume"},
	"paused":     {"endpoint.pause", "endpoint.enable"},
	"delivered":  {"delivery.retry"},
	"replayed":   {"deadletter.replay"},
	"deprecated": {"eventtype.deprecate"},
	// A group with members is not rewound.
	"Stable": {"group.rewind"}, "PreparingRebalance": {"group.rewind"}, "CompletingRebalance": {"group.rewind"},
}

// checkJS lists what the page shows that a person should not read: it is
// given the forbidden actions by state, and answers a list of problems.
const checkJS = `((forbidden) => {
  const out = [];
  const vw = document.documentElement.clientWidth;
  if (document.documentElement.scrollWidth > vw) out.push('the page is ' + document.documentElement.scrollWidth + ' px wide in a ' + vw + ' px window');
  document.querySelectorAll('table').forEach((t, i) => {
    const r = t.getBoundingClientRect();
    if (r.right > vw + 0.5) out.push('table ' + (t.caption ? JSON.stringify(t.caption.textContent) : i) + ' reaches ' + Math.round(r.right) + ' px');
  });
  document.querySelectorAll('th').forEach(th => {
    if (th.textContent.includes('_')) out.push('a column header with an underscore: ' + JSON.stringify(th.textContent));
  });
  const iso = /\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}/;
  document.querySelectorAll('main p').forEach(p => {
    if (iso.test(p.innerText)) out.push('a raw time in a paragraph: ' + JSON.stringify(p.innerText.slice(0, 120)));
  });
  // A body shown as such (an answer's, in a pre) is no value of a cell.
  document.querySelectorAll('main td, main dd, main li, main caption').forEach(c => {
    const copy = c.cloneNode(true);
    copy.querySelectorAll('pre, details').forEach(p => p.remove());
    const s = copy.textContent.trim();
    if (/^(true|false|null|\[\]|\{\})$/.test(s)) out.push('a bare ' + s + ' in a cell');
    if (/^[\[{]/.test(s)) { try { JSON.parse(s); out.push('raw JSON in a cell: ' + s.slice(0, 80)); } catch (e) {} }
    if (iso.test(s)) out.push('a raw time in a cell: ' + JSON.stringify(s.slice(0, 80)));
  });
  document.querySelectorAll('[data-state]').forEach(row => {
    const bad = forbidden[row.getAttribute('data-state')] || [];
    row.querySelectorAll('[data-op]').forEach(a => {
      if (bad.includes(a.getAttribute('data-op'))) out.push('a ' + row.getAttribute('data-state') + ' row offers ' + a.getAttribute('data-op'));
    });
  });
  document.querySelectorAll('a[href*="?"]').forEach(a => {
    const u = new URL(a.href, location.href);
    for (const k of u.searchParams.keys()) {
      if (!/^[a-z_]+$/.test(k)) out.push('a link whose query is mangled: ' + a.getAttribute('href'));
    }
  });
  // The filters of the URL reached the page: each one its form has a
  // field for is in that field.
  for (const [k, v] of new URLSearchParams(location.search)) {
    if (k === 'cursor' || k === 'notice' || v === '') continue;
    const fields = [...document.querySelectorAll('form [name="' + k + '"]')];
    if (fields.length && !fields.some(f => f.value === v || (f.value && new Date(f.value).getTime() === new Date(v).getTime())))
      out.push('the filter ' + k + '=' + v + ' did not reach the page (its field holds ' + JSON.stringify(fields.map(f => f.value)) + ')');
  }
  return out;
})`

// checkMadeForPeople lists the problems of the page the browser shows.
func (b *bundle) checkMadeForPeople(t *testing.T, ctx context.Context, path string) []string {
	t.Helper()
	rules, err := json.Marshal(forbidden)
	if err != nil {
		t.Fatal(err)
	}
	var problems []string
	if err := chromedp.Run(ctx, chromedp.Evaluate(checkJS+"("+string(rules)+")", &problems)); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var h1 string
	var errs []string
	if err := chromedp.Run(ctx, chromedp.Text(`h1`, &h1),
		chromedp.Evaluate(`[...document.querySelectorAll('p.error')].map(p => p.textContent)`, &errs)); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if len(errs) > 0 || h1 == "Not found" || h1 == "Error" || h1 == "Forbidden" {
		problems = append(problems, fmt.Sprintf("renders %q with the errors %q", h1, errs))
	}
	return problems
}

// axeClean runs axe-core in the page: no serious or critical violation.
func (b *bundle) axeClean(t *testing.T, ctx context.Context, axe, path string) {
	t.Helper()
	var raw string
	err := chromedp.Run(ctx,
		chromedp.ActionFunc(func(ctx context.Context) error { return page.SetBypassCSP(true).Do(ctx) }),
		chromedp.Evaluate(axe, nil),
		chromedp.Evaluate(`axe.run(document, {resultTypes: ['violations']}).then(r => JSON.stringify(r.violations))`, &raw,
			func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }),
	)
	if err != nil {
		t.Fatalf("%s: axe: %v", path, err)
	}
	var violations []axeResult
	if err := json.Unmarshal([]byte(raw), &violations); err != nil {
		t.Fatalf("%s: axe answered %.200s: %v", path, raw, err)
	}
	for _, v := range violations {
		if v.Impact == "serious" || v.Impact == "critical" {
			t.Errorf("%s: axe %s (%s): %s, at %v", path, v.ID, v.Impact, v.Help, v.Nodes)
		}
	}
}
