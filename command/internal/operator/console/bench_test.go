package console_test

import (
	"context"
	"net/http"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/sluicehq/sluice/command/internal/operator/admintoken"
	"github.com/sluicehq/sluice/command/internal/operator/console"
)

// benchFill is the inbox of dev/bench's search step: rows of one tenant's
// source over the last 20 hours, about three events per object, 1%
// quarantined.
const benchFill = `
INSERT INTO inbox (tenant_id, source_id, source_account, event_id, event_type, object_type, object_id,
                   event_time, received_at, status, reason, body_sha256)
SELECT $1, $2, $3, 'evt_bench_' || g, t.type, 'invoice', 'in_bench_' || (g / 3),
       now() - interval '20 hours' * (1 - g::float8 / $4), now() - interval '20 hours' * (1 - g::float8 / $4),
       CASE WHEN g % 100 = 0 THEN 'quarantined' ELSE 'published' END,
       CASE WHEN g % 100 = 0 THEN 'schema: /data/object/amount_paid: missing' ELSE '' END,
       sha256(g::text::bytea)
FROM generate_series(1, $4) g
JOIN (VALUES (0, 'stripe.invoice.paid'), (1, 'stripe.invoice.updated'), (2, 'stripe.charge.refunded')) t(n, type) ON t.n = g % 3`

// deliveriesFill gives one endpoint as many deliveries over the last day
// (1% dead, the newest hundred pending) and the deliverer's figures for
// each minute of it.
const deliveriesFill = `
WITH d AS (
	INSERT INTO deliveries (endpoint_id, tenant_id, webhook_id, partition_key, state, attempts, last_status, latency_ms, delivered_at,
	                        inbox_id, event_id, event_type, source, topic, partition, "offset", created_at)
	SELECT $1, $2, 'msg_bench_' || g, 'invoice/in_bench_' || (g / 3),
	       CASE WHEN g % 100 = 0 THEN 'dead' WHEN g > $3 - 100 THEN 'pending' ELSE 'delivered' END,
	       1, CASE WHEN g % 100 = 0 THEN 500 ELSE 200 END, 40,
	       CASE WHEN g % 100 = 0 OR g > $3 - 100 THEN NULL ELSE now() - interval '24 hours' * (1 - g::float8 / $3) END,
	       g, 'evt_bench_' || g, 'stripe.invoice.paid', 's', 'sluice.invoices', 0, g, now() - interval '24 hours' * (1 - g::float8 / $3)
	FROM generate_series(1, $3::int) g
	RETURNING 1
)
INSERT INTO delivery_minutes (endpoint_id, minute, attempts, delivered, failed, answered, latency_ms_sum, le_50)
SELECT $1, date_trunc('minute', now()) - m * interval '1 minute', ($3::int / 1440), ($3::int / 1440) - 7, 7, ($3::int / 1440), 40 * ($3::int / 1440), ($3::int / 1440)
FROM generate_series(0, 1439) m`

// BenchmarkPagesAtVolume measures each page, for an unscoped token and one
// of the rows' tenant, over an inbox of 1,000,000 rows and as many
// deliveries to one endpoint (BENCH_SEARCH_ROWS for another size): the server's time (a request
// from a client on the same host, to the last byte) and Chromium's
// navigation to the load event, each as its p95 over its runs; the targets
// are 100 ms and 300 ms. Run: go test -run '^$' -bench PagesAtVolume -benchtime 1x ./internal/operator/console/
func BenchmarkPagesAtVolume(b *testing.B) {
	rows := 1_000_000
	if n, err := strconv.Atoi(os.Getenv("BENCH_SEARCH_ROWS")); err == nil && n > 0 {
		rows = n
	}
	bd := setup(b)
	w := bd.newWorld(b)
	began := time.Now()
	if _, err := bd.pool.Exec(b.Context(), benchFill, w.tenant, w.source, w.account, rows); err != nil {
		b.Fatal(err)
	}
	if _, err := bd.pool.Exec(b.Context(), `ANALYZE inbox`); err != nil {
		b.Fatal(err)
	}
	if _, err := bd.pool.Exec(b.Context(), deliveriesFill, w.endpoint, w.tenant, rows); err != nil {
		b.Fatal(err)
	}
	// The deliverer's mark: everything below the first pending delivery
	// is settled.
	if _, err := bd.pool.Exec(b.Context(), `
INSERT INTO delivery_marks (endpoint_id, low) SELECT $1, min(id) FROM deliveries WHERE endpoint_id = $1 AND state = 'pending'
ON CONFLICT (endpoint_id) DO UPDATE SET low = excluded.low`, w.endpoint); err != nil {
		b.Fatal(err)
	}
	if _, err := bd.pool.Exec(b.Context(), `ANALYZE deliveries; ANALYZE delivery_minutes`); err != nil {
		b.Fatal(err)
	}
	b.Logf("inbox and deliveries filled with %d rows each in %s", rows, time.Since(began).Round(time.Millisecond))
	pages := []string{"/", "/events", "/events?object_id=in_bench_4711", "/events?event_id=evt_bench_99999", "/events?status=quarantined",
		"/events/" + w.inboxID, "/dead-letters", "/conflicts", "/sources", "/destinations?tenant_id=" + w.tenant, "/deliveries", "/audit",
		"/reconciliation", "/destinations/" + w.endpoint, "/deliveries?endpoint_id=" + w.endpoint, "/deliveries?endpoint_id=" + w.endpoint + "&state=dead"}
	for _, tenant := range []string{"", w.tenant} {
		who := "unscoped"
		if tenant != "" {
			who = "scoped"
		}
		_, token := bd.token(b, admintoken.RoleOperate, tenant)
		c := bd.client(b)
		bd.signIn(b, c, token)
		ctx := browser(b) // a browser of its own: one signed in shows no sign-in form
		bd.browserSignIn(b, ctx, token)
		for range b.N {
			for _, p := range pages {
				server, nav := bd.measurePage(b, ctx, c, p)
				b.Logf("%-8s %-45s server p95 %6.1f ms   navigation p95 %6.1f ms", who, p, ms(server), ms(nav))
				if server > 100*time.Millisecond || nav > 300*time.Millisecond {
					b.Errorf("%s %s: server p95 %s (target 100 ms), navigation p95 %s (target 300 ms)", who, p, server, nav)
				}
			}
		}
	}
}

// measurePage is a page's server p95 over 30 requests and its navigation
// p95 over 10 loads in the browser.
func (bd *bundle) measurePage(b *testing.B, ctx context.Context, c *http.Client, p string) (server, nav time.Duration) {
	server = p95(30, func() time.Duration {
		start := time.Now()
		resp, err := c.Get(bd.srv.URL + console.Prefix + p)
		if err != nil {
			b.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("%s: %d", p, resp.StatusCode)
		}
		return time.Since(start)
	})
	nav = p95(10, func() time.Duration {
		var ms float64
		err := chromedp.Run(ctx, chromedp.Navigate(bd.srv.URL+console.Prefix+p),
			chromedp.Evaluate(`performance.getEntriesByType('navigation')[0].loadEventEnd`, &ms))
		if err != nil {
			b.Fatal(err)
		}
		return time.Duration(ms * float64(time.Millisecond))
	})
	return server, nav
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func p95(n int, run func() time.Duration) time.Duration {
	took := make([]time.Duration, n)
	for i := range took {
		took[i] = run()
	}
	slices.Sort(took)
	return took[(n*95+99)/100-1]
}
