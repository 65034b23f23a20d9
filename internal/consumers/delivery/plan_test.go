package delivery_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sluicehq/sluice/internal/consumers/delivery"
	"github.com/sluicehq/sluice/internal/pg"
	"github.com/sluicehq/sluice/internal/store/endpoints"
	"github.com/sluicehq/sluice/internal/testenv"
)

// grown are the tables that grow with deliveries: no plan the deliverer
// keeps may scan them.
var grown = []string{"deliveries", "delivery_attempts", "delivery_minutes", "delivery_redos", "delivery_marks",
	"pending_deliveries", "inbox", "inbox_payloads"}

// A deliverer plans its statements once per connection, with the
// statistics of their first call, and keeps the plans while deliveries
// grow. Whatever those statistics say (never analyzed, analyzed empty,
// analyzed at tens of rows, or grown since), none of its plans scans a
// table that grows, every read of deliveries by an endpoint's range goes
// through deliveries_endpoint (not an index of the endpoint's whole rows
// and a sort) and every read of inbox through its primary key;
// pg_stat_user_tables backs the plans over 1,000 deliveries.
func TestNoDelivererPlanScansWhatGrowsInAnyStatisticsState(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	for _, table := range []string{"deliveries", "inbox"} {
		if _, err := e.pool.Exec(ctx, `ALTER TABLE `+table+` SET (autovacuum_enabled = off)`); err != nil {
			t.Fatal(err)
		}
	}
	// Another deliverer of this release, as far as the deliverers' locks
	// say: a stop of the ones below hands nothing over (handOver's reads
	// of every endpoint are a stop's, not a delivery's).
	other, err := e.pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Release()
	if _, err := other.Exec(ctx, `SELECT pg_advisory_lock_shared(hashtext('sluice.deliverers.marks'), hashtext('')),
       pg_advisory_lock_shared(hashtext('sluice.deliverers'), hashtext(''))`); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_, _ = other.Exec(ctx, `SELECT pg_advisory_unlock_all()`)
	}()
	rc := newOrderLog(t)
	var failed sync.Map
	rc.fail = func(id string) bool { // every key's first fails once...
		_, again := failed.LoadOrStore(id, true)
		return !again && strings.HasSuffix(id, "/001")
	}
	endpoint := e.newEndpoint(t, rc.url)
	// The test's own statements read through indexes too (the committers'
	// pool plans no scan where one serves), so the scans counted are the
	// deliverer's.
	probe, err := pg.ConnectCommitter(ctx, e.url, 2)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(probe.Close)
	seq := 0
	deliver := func(t *testing.T, pool *pgxpool.Pool, n int) {
		t.Helper()
		ids, rows := e.writeWithBodies(t, probe, endpoint, seq, n)
		seq += n
		stop := e.quick(t, pool, 20*time.Millisecond, nil)
		e.waitFor(t, "the deliveries", func() bool {
			for _, id := range ids {
				if rc.answered(id) == 0 {
					return false
				}
			}
			return true
		})
		// ... and a retry (its range) of one of them once delivered, sent again.
		store := endpoints.Store{Pool: probe}
		e.waitFor(t, "the first delivery recorded", func() bool {
			d, err := store.Delivery(ctx, rows[0])
			if err != nil {
				t.Fatal(err)
			}
			return d.State == endpoints.Delivered
		})
		if _, err := store.Retry(ctx, rows[0]); err != nil {
			t.Fatal(err)
		}
		e.waitFor(t, "the retry", func() bool { return rc.answered(ids[0]) == 2 })
		stop()
	}
	top := t
	// Every pool the test opened, whose backends' statistics are flushed
	// before a count: an idle backend sends what it counted up to ten
	// seconds later, which landed scans of an earlier state in the window.
	pools := []*pgxpool.Pool{probe, e.pool}
	deliverer := func(t *testing.T) (*pgxpool.Pool, *pgx.Conn) {
		t.Helper()
		pool, err := pg.ConnectDeliverer(ctx, e.url, 4)
		if err != nil {
			t.Fatal(err)
		}
		pools = append(pools, pool)
		top.Cleanup(pool.Close) // the last state's pool is used again after its subtest
		// A connection of the deliverer's own kind, kept out of its pool,
		// whose kept plans are examined.
		c, err := pool.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		conn := c.Hijack()
		top.Cleanup(func() { _ = conn.Close(context.Background()) })
		return pool, conn
	}
	analyze := func(t *testing.T) {
		t.Helper()
		if _, err := e.pool.Exec(ctx, `ANALYZE deliveries; ANALYZE inbox; ANALYZE inbox_payloads`); err != nil {
			t.Fatal(err)
		}
	}
	var (
		tens     *pgxpool.Pool
		tensConn *pgx.Conn
	)
	for _, state := range []struct {
		name   string
		before func(t *testing.T)
	}{
		{"never analyzed", func(t *testing.T) {}},
		{"analyzed empty", func(t *testing.T) {
			if _, err := e.pool.Exec(ctx, `TRUNCATE deliveries, inbox, inbox_payloads, delivery_marks, delivery_redos CASCADE`); err != nil {
				t.Fatal(err)
			}
			analyze(t)
		}},
		{"analyzed at tens of rows", func(t *testing.T) {
			pool, _ := deliverer(t)
			deliver(t, pool, 40)
			analyze(t)
		}},
	} {
		t.Run(state.name, func(t *testing.T) {
			state.before(t)
			pool, conn := deliverer(t)
			requireIndexReads(t, conn)
			deliver(t, pool, 10)
			tens, tensConn = pool, conn
		})
	}
	t.Run("grown since", func(t *testing.T) {
		if tens == nil {
			t.Fatal("no deliverer from the states before")
		}
		before := seqScans(t, pools...)
		deliver(t, tens, 1000)
		requireIndexReads(t, tensConn)
		if after := seqScans(t, pools...); after > before {
			t.Errorf("%d sequential scans of the tables that grow over 1,000 deliveries, want none", after-before)
		}
	})
}

// writeWithBodies writes, through q, n deliveries of endpoint after the
// n-th, over eight keys (busy ones: more than an owner holds of a key),
// each of an event whose body its inbox row's payload holds, as ingest
// leaves it; it returns their ids and row ids.
func (e env) writeWithBodies(t *testing.T, q *pgxpool.Pool, endpoint string, from, n int) ([]string, []int64) {
	t.Helper()
	ctx := context.Background()
	var f endpoints.Fanout
	var ids []string
	for i := from; i < from+n; i++ {
		id := fmt.Sprintf("k%d/%03d", i%8, i/8+1)
		var inbox int64
		if err := q.QueryRow(ctx, `WITH i AS (
  INSERT INTO inbox (tenant_id, source_id, source_account, event_id, event_type, status, body_sha256)
  VALUES ($1, gen_random_uuid(), 'acct', $2, 't.x', 'published', sha256('{}')) RETURNING id, received_at
) INSERT INTO inbox_payloads (inbox_id, received_at, body) SELECT id, received_at, '{}' FROM i RETURNING inbox_id`, e.tenant, id).Scan(&inbox); err != nil {
			t.Fatal(err)
		}
		d := e.newDelivery(endpoint, id)
		d.InboxID, d.Payload = &inbox, nil
		f.Add(d)
		ids = append(ids, id)
	}
	tx, err := q.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if err := f.Write(ctx, tx); err != nil {
		t.Fatal(err)
	}
	rows := e.rowIDs(t, tx, endpoint, ids)
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	return ids, rows
}

// requireIndexReads prepares every deliverer statement on conn (those
// prepared already keep their plans) and fails unless each plan kept there
// scans no table that grows, reads deliveries by an endpoint's range only
// through deliveries_endpoint, and inbox only by its primary key.
func requireIndexReads(t *testing.T, conn *pgx.Conn) {
	t.Helper()
	ctx := context.Background()
	for name, sql := range delivery.Statements {
		if _, err := conn.Prepare(ctx, name, sql); err != nil {
			t.Fatalf("prepare %s: %v", name, err)
		}
	}
	plans := testenv.KeptPlans(t, conn)
	if len(plans) < len(delivery.Statements) {
		t.Fatalf("%d plans for %d statements", len(plans), len(delivery.Statements))
	}
	for name, plan := range plans {
		plan.Walk(func(n testenv.Plan) {
			switch {
			case n.NodeType == "Seq Scan" && isGrown(n.Relation):
				t.Errorf("%s scans %s: %s", name, n.Relation, plan.JSON)
			case n.Relation == "deliveries" && strings.Contains(n.IndexCond, "endpoint_id") && n.Index != "deliveries_endpoint":
				t.Errorf("%s reads an endpoint's deliveries through %s: %s", name, n.Index, plan.JSON)
			case n.Relation == "inbox" && n.Index != "" && n.Index != "inbox_pkey":
				t.Errorf("%s reads inbox through %s, not by id: %s", name, n.Index, plan.JSON)
			}
		})
	}
}

func isGrown(relation string) bool {
	for _, g := range grown {
		if relation == g || strings.HasPrefix(relation, g+"_p") {
			return true
		}
	}
	return false
}

// seqScans counts the sequential scans of the tables that grow so far,
// once every connection of pools has sent its counts (a backend sends them
// when idle, at most once a second otherwise).
func seqScans(t *testing.T, pools ...*pgxpool.Pool) int64 {
	t.Helper()
	ctx := context.Background()
	for _, p := range pools {
		conns := p.AcquireAllIdle(ctx)
		for _, c := range conns {
			// Sent before the connection says it is ready again.
			if _, err := c.Exec(ctx, `SELECT pg_stat_force_next_flush()`); err != nil {
				t.Fatal(err)
			}
			c.Release()
		}
	}
	var n int64
	if err := pools[0].QueryRow(ctx, `SELECT coalesce(sum(seq_scan), 0) FROM pg_stat_user_tables
WHERE relname = ANY($1) OR relname LIKE 'inbox_payloads_p%'`, grown).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
