package ingest

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluicehq/sluice/internal/pg"
)

// A committer plans its statements once, with the statistics of their
// first call, and keeps the plans while the inbox grows. Whatever those
// statistics say (never analyzed, analyzed empty, analyzed at tens of rows,
// or grown since), the accepting statement probes the inbox by the whole
// event key and scans no table, and no committer statement does either;
// pg_stat_user_tables backs the plans over 1,000 accepts.
func TestNoCommitterPlanScansTheInboxInAnyStatisticsState(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := ownDatabaseURL(t)
	admin, err := pg.Connect(ctx, url, 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(admin.Close)
	// Statistics change only when this test says so.
	if _, err := admin.Exec(ctx, `ALTER TABLE inbox SET (autovacuum_enabled = off)`); err != nil {
		t.Fatal(err)
	}
	tenant, source, topic := uuid.NewString(), uuid.NewString(), "plan.invoices"
	seq := 0
	accept := func(t *testing.T, pool *pgxpool.Pool, n int) {
		t.Helper()
		c := newCommitter(nil, slog.New(slog.DiscardHandler), CommitConfig{Pool: pool}, newMetrics(prometheus.NewRegistry(), false), nil)
		for range n {
			seq++
			body := fmt.Appendf(nil, `{"id":"evt_%d","type":"invoice.paid"}`, seq)
			d := publishedDelivery(tenant, source, fmt.Sprintf("evt_%d", seq), &topic, body)
			d.JSONSum = bodyJSONSum(body)
			// Each once, then again (a duplicate), then other content
			// under the same key (a conflict): every committer statement.
			other := *d
			other.Body = fmt.Appendf(nil, `{"id":"evt_%d","type":"invoice.paid","amount":2}`, seq)
			other.Sum, other.JSONSum, other.Payload = sha256.Sum256(other.Body), bodyJSONSum(other.Body), other.Body
			for _, d := range []*delivery{d, d, &other} {
				if _, err := c.write(ctx, []*request{{d: d}}); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	top := t
	committer := func(t *testing.T) *pgxpool.Pool {
		t.Helper()
		pool, err := pg.ConnectCommitter(ctx, url, 1)
		if err != nil {
			t.Fatal(err)
		}
		top.Cleanup(pool.Close) // the last state's pool is used again after its subtest
		return pool
	}
	analyze := func(t *testing.T) {
		t.Helper()
		if _, err := admin.Exec(ctx, `ANALYZE inbox; ANALYZE inbox_payloads; ANALYZE inbox_duplicates; ANALYZE inbox_conflicts`); err != nil {
			t.Fatal(err)
		}
	}

	var tens *pgxpool.Pool
	for _, state := range []struct {
		name   string
		before func(t *testing.T)
	}{
		{"never analyzed", func(t *testing.T) {}},
		{"analyzed empty", func(t *testing.T) {
			if _, err := admin.Exec(ctx, `TRUNCATE inbox, inbox_payloads, outbox, inbox_duplicates, inbox_conflicts`); err != nil {
				t.Fatal(err)
			}
			analyze(t)
		}},
		{"analyzed at tens of rows", func(t *testing.T) {
			accept(t, committer(t), 40)
			analyze(t)
		}},
	} {
		t.Run(state.name, func(t *testing.T) {
			state.before(t)
			pool := committer(t)
			accept(t, pool, 1)
			requireKeyProbes(t, pool)
			tens = pool
		})
	}
	// The last state's connection keeps the plans it made at tens of rows
	// while the inbox grows to a thousand, without a new ANALYZE.
	t.Run("grown since", func(t *testing.T) {
		before := inboxScans(t, admin, tens)
		accept(t, tens, 1000)
		requireKeyProbes(t, tens)
		fresh := committer(t)
		accept(t, fresh, 1)
		requireKeyProbes(t, fresh)
		if after := inboxScans(t, admin, tens); after.scans > before.scans || after.read > before.read {
			t.Errorf("%d sequential scans of inbox reading %d rows over 1,000 accepts, want none",
				after.scans-before.scans, after.read-before.read)
		}
	})
}

// requireKeyProbes fails unless every statement prepared on pool's one
// connection has a cached plan that scans no table, and probes inbox only
// by the event key's unique index with the whole key.
func requireKeyProbes(t *testing.T, pool *pgxpool.Pool) {
	t.Helper()
	ctx := context.Background()
	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	rows, err := conn.Query(ctx, `SELECT name, cardinality(parameter_types) FROM pg_prepared_statements`)
	if err != nil {
		t.Fatal(err)
	}
	type stmt struct {
		name   string
		params int
	}
	var stmts []stmt
	for rows.Next() {
		var s stmt
		if err := rows.Scan(&s.name, &s.params); err != nil {
			t.Fatal(err)
		}
		stmts = append(stmts, s)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	seen := false
	for _, s := range stmts {
		// A generic plan does not depend on the values: NULL for each.
		execute := "EXECUTE " + s.name
		if s.params > 0 {
			execute += "(" + strings.TrimSuffix(strings.Repeat("NULL, ", s.params), ", ") + ")"
		}
		var plan []byte
		if err := conn.QueryRow(ctx, "EXPLAIN (FORMAT JSON) "+execute).Scan(&plan); err != nil {
			t.Fatalf("explain %s: %v", s.name, err)
		}
		if strings.Contains(string(plan), `"Utility Statement"`) {
			continue // an EXPLAIN of an earlier call, which pgx prepared too
		}
		var doc []struct{ Plan planNode }
		if err := json.Unmarshal(plan, &doc); err != nil {
			t.Fatalf("%s: %v: %s", s.name, err, plan)
		}
		doc[0].Plan.walk(func(n planNode) {
			switch {
			case n.NodeType == "Seq Scan":
				t.Errorf("%s scans %s: %s", s.name, n.Relation, plan)
			case n.Relation == "inbox" && strings.Contains(n.NodeType, "Index"):
				if n.Index != "inbox_event_key" || !strings.Contains(n.IndexCond, "source_id") ||
					!strings.Contains(n.IndexCond, "source_account") || !strings.Contains(n.IndexCond, "event_id") {
					t.Errorf("%s reads inbox by %s on %q, not by the whole event key", s.name, n.Index, n.IndexCond)
				}
			}
		})
		seen = seen || s.name == "sluice_ingest_accept"
	}
	if !seen {
		t.Fatalf("the accepting statement is not prepared on the committer's connection (%v)", stmts)
	}
}

type planNode struct {
	NodeType  string     `json:"Node Type"`
	Relation  string     `json:"Relation Name"`
	Index     string     `json:"Index Name"`
	IndexCond string     `json:"Index Cond"`
	Plans     []planNode `json:"Plans"`
}

func (n planNode) walk(f func(planNode)) {
	f(n)
	for _, c := range n.Plans {
		c.walk(f)
	}
}

type scans struct{ scans, read int64 }

// inboxScans reads inbox's sequential scans and the rows they read, once
// each pool's one connection has sent its counts (a backend sends them at
// most once a second otherwise; a TRUNCATE's index rebuilds count too).
func inboxScans(t *testing.T, admin *pgxpool.Pool, pools ...*pgxpool.Pool) scans {
	t.Helper()
	ctx := context.Background()
	for _, p := range append(pools, admin) {
		// Sent when the connection is next idle: after this statement.
		if _, err := p.Exec(ctx, `SELECT pg_stat_force_next_flush()`); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := admin.Exec(ctx, `SELECT pg_stat_clear_snapshot()`); err != nil {
		t.Fatal(err)
	}
	var s scans
	if err := admin.QueryRow(ctx, `SELECT seq_scan, seq_tup_read FROM pg_stat_user_tables WHERE relname = 'inbox'`).Scan(&s.scans, &s.read); err != nil {
		t.Fatal(err)
	}
	return s
}
