package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// searchRows is the inbox the search step fills: 1,000,000 rows, or
// BENCH_SEARCH_ROWS (a tiny run to check the step works).
func (b *bench) searchRows() int {
	if n, err := strconv.Atoi(os.Getenv("BENCH_SEARCH_ROWS")); err == nil && n > 0 {
		return n
	}
	return 1_000_000
}

// searchFill is the inbox as months of webhooks leave it: rows of the
// bench's tenants in turn, over the last 20 hours, about three events per
// object (paid, updated, refunded), 1% quarantined, each with a distinct
// provider event id. One INSERT from generate_series, then ANALYZE, as a
// long-lived table would be.
const searchFill = `
INSERT INTO inbox (tenant_id, source_id, source_account, event_id, event_type, object_type, object_id,
                   event_time, received_at, status, reason, body_sha256)
SELECT s.tenant_id, s.id, s.account, 'evt_search_' || g, t.type, 'invoice', 'in_search_' || (g / 3),
       now() - interval '20 hours' * (1 - g::float8 / $2), now() - interval '20 hours' * (1 - g::float8 / $2),
       CASE WHEN g % 100 = 0 THEN 'quarantined' ELSE 'published' END,
       CASE WHEN g % 100 = 0 THEN 'schema: /data/object/amount_paid: missing' ELSE '' END,
       sha256(g::text::bytea)
FROM generate_series(1, $2) g
JOIN (SELECT id, tenant_id, account, row_number() OVER (ORDER BY id) - 1 AS n FROM sources WHERE id = ANY($1::uuid[])) s
    ON s.n = g % array_length($1::uuid[], 1)
JOIN (VALUES (0, 'stripe.invoice.paid'), (1, 'stripe.invoice.updated'), (2, 'stripe.charge.refunded')) t(n, type)
    ON t.n = g % 3`

// fillSearch fills the inbox with searchFill's rows, once per bench: the
// search and console steps both read them.
func (b *bench) fillSearch(ctx context.Context) error {
	if b.searchFilled {
		return nil
	}
	rows := b.searchRows()
	var sources []string
	for _, s := range b.sources {
		sources = append(sources, s.sourceID)
	}
	began := time.Now()
	if _, err := b.pool.Exec(ctx, searchFill, sources, rows); err != nil {
		return fmt.Errorf("fill the inbox: %w", err)
	}
	if _, err := b.pool.Exec(ctx, `ANALYZE inbox`); err != nil {
		return err
	}
	b.searchFilled = true
	log.Printf("inbox filled with %d rows in %s", rows, time.Since(began).Round(time.Millisecond))
	return nil
}

// adminSearch times the operators' searches on a large inbox, as the admin
// API of `sluice serve` answers them (GET /admin/v1/events, each answer read
// to its last byte): by provider event id, by object id, and one tenant over
// an hour. It runs last: its rows would weigh on the ingest steps.
func (b *bench) adminSearch(ctx context.Context) error {
	if err := b.fillSearch(ctx); err != nil {
		return err
	}
	p, err := b.startSluice("serve", b.stageAddr, b.slot("search"))
	if err != nil {
		return err
	}
	defer func() {
		p.terminate()
		if _, err := b.pool.Exec(context.WithoutCancel(ctx), `SELECT pg_drop_replication_slot($1)`, b.slot("search")); err != nil {
			log.Printf("search: drop slot: %v", err)
		}
	}()
	token, err := b.adminToken(ctx, "", "bench search")
	if err != nil {
		return err
	}
	rows := b.searchRows()
	rnd := rand.New(rand.NewPCG(1, uint64(rows)))
	tenants := func() string { return b.sources[rnd.IntN(len(b.sources))].tenantID }
	kinds := []struct {
		key    string
		filter func() url.Values
	}{
		{"event_id", func() url.Values {
			return url.Values{"event_id": {fmt.Sprintf("evt_search_%d", 1+rnd.IntN(rows))}}
		}},
		{"object_id", func() url.Values {
			return url.Values{"object_id": {fmt.Sprintf("in_search_%d", rnd.IntN(rows/3+1))}}
		}},
		{"tenant_time", func() url.Values {
			since := time.Now().Add(-time.Duration(1+rnd.IntN(19)) * time.Hour)
			return url.Values{"tenant_id": {tenants()}, "since": {since.Format(time.RFC3339)}, "until": {since.Add(time.Hour).Format(time.RFC3339)}}
		}},
	}
	c := &http.Client{Timeout: 30 * time.Second}
	n := pick(b.quick, 200, 1000)
	var worst float64
	for _, k := range kinds {
		lat := make([]time.Duration, 0, n)
		found := 0
		for i := range n + 20 {
			start := time.Now()
			items, err := searchOnce(ctx, c, "http://"+b.adminAddr+"/admin/v1/events?"+k.filter().Encode(), token)
			if err != nil {
				return fmt.Errorf("search by %s: %w", k.key, err)
			}
			if i >= 20 { // the first ones warm the cache and the statement cache
				lat = append(lat, time.Since(start))
				found += items
			}
		}
		slices.Sort(lat)
		p99 := ms(lat[len(lat)*99/100])
		b.results["admin_search_"+k.key+"_p99_ms"] = p99
		b.results["admin_search_"+k.key+"_p50_ms"] = ms(lat[len(lat)/2])
		worst = max(worst, p99)
		log.Printf("search by %s: p50 %.2f ms, p99 %.2f ms, %.1f rows per search", k.key, ms(lat[len(lat)/2]), p99, float64(found)/float64(n))
	}
	b.results["admin_search_p99_ms_at_1m_rows"] = worst
	b.results["admin_search_rows"] = float64(rows)
	if rows != 1_000_000 {
		b.note("admin search measured on %d inbox rows (BENCH_SEARCH_ROWS), not 1,000,000", rows)
	}
	return nil
}

// searchOnce asks the admin API for one page of events and counts them.
func searchOnce(ctx context.Context, c *http.Client, u, token string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		return 0, fmt.Errorf("%s: %s", resp.Status, body)
	}
	var page struct {
		Items []json.RawMessage `json:"items"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&page); err != nil {
		return 0, err
	}
	return len(page.Items), nil
}

// dropIndexes drops the indexes BENCH_DROP_INDEXES names (comma-separated)
// after the migrations, so alternating runs with and without them measure
// what they cost ingest, on the same build and machine.
func (b *bench) dropIndexes(ctx context.Context) error {
	for _, name := range strings.Split(os.Getenv("BENCH_DROP_INDEXES"), ",") {
		if name = strings.TrimSpace(name); name == "" {
			continue
		}
		if _, err := b.pool.Exec(ctx, "DROP INDEX "+pgx.Identifier{name}.Sanitize()); err != nil {
			return fmt.Errorf("BENCH_DROP_INDEXES: %w", err)
		}
		b.note("index %s dropped before the steps (BENCH_DROP_INDEXES)", name)
	}
	return nil
}
