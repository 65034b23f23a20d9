package delivery_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sluicehq/sluice/internal/consumers/delivery"
	"github.com/sluicehq/sluice/internal/egress"
	"github.com/sluicehq/sluice/internal/pg"
	"github.com/sluicehq/sluice/internal/store/endpoints"
	"github.com/sluicehq/sluice/internal/testenv"
)

// orderLog is an endpoint that records, per resource key, the deliveries
// it answered 2xx in the order of their first 2xx; webhook-ids are
// "msg_<key>/<n>". fail, when set, makes it answer 503 instead.
type orderLog struct {
	url  string
	fail func(webhookID string) bool
	// cut, when set, runs before every 2xx with the number of requests so
	// far.
	cut func(requests int)

	mu       sync.Mutex
	requests int
	oks      map[string]int
	first    map[string][]string
}

func newOrderLog(t *testing.T) *orderLog {
	t.Helper()
	o := &orderLog{oks: map[string]int{}, first: map[string][]string{}}
	srv := httptest.NewServer(o)
	t.Cleanup(srv.Close)
	o.url = srv.URL
	return o
}

func (o *orderLog) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id := strings.TrimPrefix(r.Header.Get("webhook-id"), "msg_")
	o.mu.Lock()
	o.requests++
	n, fail, cut := o.requests, o.fail, o.cut
	o.mu.Unlock()
	if fail != nil && fail(id) {
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	if cut != nil {
		cut(n)
	}
	o.mu.Lock()
	o.oks[id]++
	if o.oks[id] == 1 {
		key, _, _ := strings.Cut(id, "/")
		o.first[key] = append(o.first[key], id)
	}
	o.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// answered is how many 2xx delivery id got.
func (o *orderLog) answered(id string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.oks[id]
}

// inOrder fails t unless every key's first 2xx came in the order of ids.
func (o *orderLog) inOrder(t *testing.T, ids []string) {
	t.Helper()
	want := map[string][]string{}
	for _, id := range ids {
		key, _, _ := strings.Cut(id, "/")
		want[key] = append(want[key], id)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	for key, w := range want {
		if !slices.Equal(o.first[key], w) {
			t.Errorf("key %s: first 2xx %v, want %v", key, o.first[key], w)
		}
	}
}

// write inserts endpoint's deliveries ids ("<key>/<n>") in their order as
// the fan-out does, announced at commit, and returns their row ids.
func (e env) write(t *testing.T, endpoint string, ids ...string) []int64 {
	t.Helper()
	ctx := context.Background()
	tx, err := e.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	rows := e.writeIn(t, tx, endpoint, ids...)
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	return rows
}

// writeIn is write's insert in tx, which the caller commits.
func (e env) writeIn(t *testing.T, tx pgx.Tx, endpoint string, ids ...string) []int64 {
	t.Helper()
	var f endpoints.Fanout
	for _, id := range ids {
		f.Add(e.newDelivery(endpoint, id))
	}
	if err := f.Write(context.Background(), tx); err != nil {
		t.Fatal(err)
	}
	return e.rowIDs(t, tx, endpoint, ids)
}

func (e env) newDelivery(endpoint, id string) endpoints.NewDelivery {
	key, _, _ := strings.Cut(id, "/")
	return endpoints.NewDelivery{EndpointID: endpoint, TenantID: e.tenant, WebhookID: "msg_" + id, Key: key, Payload: []byte(`{}`),
		EventID: id, EventType: "t.x", Source: "/s", ContentType: "application/json", Topic: "t", AcceptedAt: time.Now()}
}

// rowIDs are the row ids of endpoint's deliveries ids, as q sees them.
func (e env) rowIDs(t *testing.T, q pg.Querier, endpoint string, ids []string) []int64 {
	t.Helper()
	var out []int64
	for _, id := range ids {
		var row int64
		if err := q.QueryRow(context.Background(), `SELECT id FROM deliveries WHERE endpoint_id = $1 AND webhook_id = $2`,
			endpoint, "msg_"+id).Scan(&row); err != nil {
			t.Fatal(err)
		}
		out = append(out, row)
	}
	return out
}

// markOf reads endpoint's mark: its low-water id and its exceptions (0 and
// none without a row).
func (e env) markOf(t *testing.T, endpoint string) (low int64, ids []int64, keys []string) {
	t.Helper()
	err := e.pool.QueryRow(context.Background(), `SELECT coalesce(max(low), 0), coalesce(max(parked_ids), '{}'), coalesce(max(parked_keys), '{}')
FROM delivery_marks WHERE endpoint_id = $1`, endpoint).Scan(&low, &ids, &keys)
	if err != nil {
		t.Fatal(err)
	}
	return low, ids, keys
}

// quick is a deliverer that polls often (and so parks a key after 120 ms)
// and retries fast, over pool.
func (e env) quick(t *testing.T, pool *pgxpool.Pool, poll time.Duration, signals *delivery.TestSignals) (stop func()) {
	t.Helper()
	client := egress.NewClient(egress.Config{Policy: egress.Policy{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}, ConnectTimeout: time.Second})
	cfg := delivery.Config{Client: client, Timeout: 2 * time.Second, BackoffBase: 10 * time.Millisecond, BackoffMax: 50 * time.Millisecond,
		BreakerFailures: 1_000_000, Refresh: 20 * time.Millisecond, Poll: poll, Signals: signals}
	if pool == e.pool {
		return e.start(t, cfg)
	}
	return (env{pool: pool, ring: e.ring, tenant: e.tenant}).start(t, cfg)
}

func keyed(key string, from, to int) []string {
	var out []string
	for n := from; n <= to; n++ {
		out = append(out, fmt.Sprintf("%s/%02d", key, n))
	}
	return out
}

// A fan-out that took its delivery's id and has not committed yet: the
// endpoint's owner delivers what comes after it, but its mark does not pass
// it, so an owner that takes over after the fan-out commits, with no
// announcement heard, still finds it.
func TestTheMarkWaitsForAFanOutStillRunning(t *testing.T) {
	e := newEnv(t)
	rc := newOrderLog(t)
	endpoint := e.newEndpoint(t, rc.url)
	ctx := context.Background()
	tx, err := e.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	late := e.writeIn(t, tx, endpoint, "late/1")[0]

	signals := delivery.NewTestSignals(t)
	stop := e.quick(t, e.pool, 20*time.Millisecond, signals)
	after := keyed("k", 1, 20)
	e.write(t, endpoint, after...)
	e.waitFor(t, "the deliveries after the running fan-out's", func() bool { return e.delivered(t) == len(after) })
	signals.Checked.WaitUntil(20*time.Second, "a check of a mark past the running fan-out's delivery", func(c delivery.MarkCheck) bool {
		return c.EndpointID == endpoint && c.Proposed > late
	})
	stop()
	if low, _, _ := e.markOf(t, endpoint); low > late {
		t.Fatalf("the mark is %d, past %d, which a fan-out still running holds", low, late)
	}

	// It commits while nobody listens: the next owner reads from the mark.
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	e.quick(t, e.pool, time.Hour, nil)
	e.waitFor(t, "the running fan-out's delivery", func() bool { return rc.answered("late/1") == 1 })
}

// A key whose head keeps failing is parked: the mark moves past it and its
// later deliveries, naming them (the head and those held by id, the rest
// of the key from where it starts), so the next owner reads them back by
// id and by key, not by scanning every delivery since, and sends them in
// order once the endpoint takes them.
func TestAParkedKeyIsNamedByTheMarkAndTakenOver(t *testing.T) {
	e := newEnv(t)
	rc := newOrderLog(t)
	var stuck atomic.Bool
	stuck.Store(true)
	rc.fail = func(id string) bool { return stuck.Load() && strings.HasPrefix(id, "stuck/") }
	endpoint := e.newEndpoint(t, rc.url)
	held := keyed("stuck", 1, 12) // more than an owner holds of a key: the rest waits in Postgres
	others := keyed("k", 1, 30)
	ids := e.write(t, endpoint, append(slices.Clone(held), others...)...)

	stop := e.quick(t, e.pool, 20*time.Millisecond, nil)
	e.waitFor(t, "the other keys' deliveries", func() bool { return e.delivered(t) == len(others) })
	e.waitFor(t, "the mark past the stuck key", func() bool {
		low, parked, keys := e.markOf(t, endpoint)
		return low > ids[len(ids)-1] && slices.Contains(parked, ids[0]) && slices.Contains(keys, "stuck")
	})
	stop()

	stuck.Store(false)
	e.quick(t, e.pool, time.Hour, nil) // no poll: the takeover alone brings them
	e.waitFor(t, "the stuck key's deliveries", func() bool { return e.delivered(t) == len(ids) })
	rc.inOrder(t, append(held, others...))
}

// A retry of one delivery and a replay of a later window, made while no
// owner runs, long after the mark passed them: the next owner sends each
// again (their ranges are kept apart from the mark) and the ranges are
// gone once they are delivered again.
func TestARetryAndAReplayBelowTheMarkAreSentAgain(t *testing.T) {
	e := newEnv(t)
	rc := newOrderLog(t)
	endpoint := e.newEndpoint(t, rc.url)
	first, second := keyed("a", 1, 5), keyed("b", 1, 5)
	ids := e.write(t, endpoint, first...)
	ids = append(ids, e.write(t, endpoint, second...)...)
	stop := e.quick(t, e.pool, 20*time.Millisecond, nil)
	e.waitFor(t, "the mark past every delivery", func() bool {
		low, _, _ := e.markOf(t, endpoint)
		return low > ids[len(ids)-1]
	})
	stop()

	ctx := context.Background()
	var since time.Time
	if err := e.pool.QueryRow(ctx, `SELECT created_at FROM deliveries WHERE id = $1`, ids[len(first)]).Scan(&since); err != nil {
		t.Fatal(err)
	}
	store := endpoints.Store{Pool: e.pool, Ring: e.ring}
	if _, err := store.Retry(ctx, ids[1]); err != nil {
		t.Fatal(err)
	}
	if r, err := store.Replay(ctx, endpoints.ReplayWindow{EndpointID: endpoint, Since: since, Until: time.Now().Add(time.Minute)}); err != nil || r.Replayed != int64(len(second)) {
		t.Fatalf("replay of the second window: %+v, %v", r, err)
	}
	e.quick(t, e.pool, 20*time.Millisecond, nil)
	again := append([]string{first[1]}, second...)
	e.waitFor(t, "the retried and replayed deliveries sent again", func() bool {
		for _, id := range again {
			if rc.answered(id) != 2 {
				return false
			}
		}
		return true
	})
	e.waitFor(t, "the retry's and the replay's ranges gone", func() bool {
		var n int
		if err := e.pool.QueryRow(ctx, `SELECT count(*) FROM delivery_redos`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n == 0
	})
	for _, id := range append(slices.Clone(first), second...) {
		if n, want := rc.answered(id), 1+btoi(slices.Contains(again, id)); n != want {
			t.Errorf("%s answered %d times, want %d", id, n, want)
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// A 2xx whose outcome could not be written (its batch refused, here by a
// trigger) leaves the delivery pending: the owner's mark stops at it rather
// than pass it (a crash then would leave it pending below the mark, never
// read again), and it is sent again and written.
func TestTheMarkStopsAtAnOutcomeNotWritten(t *testing.T) {
	e := newEnv(t)
	rc := newOrderLog(t)
	endpoint := e.newEndpoint(t, rc.url)
	ctx := context.Background()
	if _, err := e.pool.Exec(ctx, `CREATE FUNCTION refuse_outcome() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN RAISE EXCEPTION 'outcome refused for the test'; END $$;
CREATE TRIGGER refuse_outcome BEFORE UPDATE ON deliveries FOR EACH ROW
WHEN (NEW.webhook_id = 'msg_k/05' AND NEW.state = 'delivered') EXECUTE FUNCTION refuse_outcome()`); err != nil {
		t.Fatal(err)
	}
	all := keyed("k", 1, 10)
	ids := e.write(t, endpoint, all...)
	signals := delivery.NewTestSignals(t)
	e.quick(t, e.pool, 20*time.Millisecond, signals)
	e.waitFor(t, "k/05 answered", func() bool { return rc.answered("k/05") > 0 })
	c := signals.Checked.WaitUntil(20*time.Second, "a check of a mark past k/05", func(c delivery.MarkCheck) bool {
		return c.EndpointID == endpoint && c.Ripe && c.Proposed > ids[4]
	})
	if c.Low > ids[4] {
		t.Fatalf("the mark moved to %d, past %d, delivered but not recorded", c.Low, ids[4])
	}
	if _, err := e.pool.Exec(ctx, `DROP TRIGGER refuse_outcome ON deliveries`); err != nil {
		t.Fatal(err)
	}
	e.waitFor(t, "every delivery recorded", func() bool { return e.delivered(t) == len(all) })
}

// An owner killed in the middle of its deliveries: from its 60th request
// on, its outcomes are refused (as if each batch were lost in the crash)
// while it goes on sending and moving its mark; then it is cut off from
// Postgres (kill -9 as its database sees it: its locks go). The next owner
// delivers everything, sending again what was answered but not recorded,
// and each key's first receipts keep their order across the two owners.
func TestAnOwnerKilledMidBatchIsTakenOverWithoutLossOrDisorder(t *testing.T) {
	e := newEnv(t)
	rc := newOrderLog(t)
	ctx := context.Background()
	if _, err := e.pool.Exec(ctx, `CREATE TABLE refused (since timestamptz);
CREATE FUNCTION refuse_outcomes() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN IF EXISTS (SELECT 1 FROM refused) THEN RAISE EXCEPTION 'outcome lost for the test'; END IF; RETURN NEW; END $$;
CREATE TRIGGER refuse_outcomes BEFORE UPDATE ON deliveries FOR EACH ROW WHEN (NEW.state = 'delivered') EXECUTE FUNCTION refuse_outcomes()`); err != nil {
		t.Fatal(err)
	}
	rc.cut = func(n int) {
		if n == 60 {
			if _, err := e.pool.Exec(ctx, `INSERT INTO refused VALUES (now())`); err != nil {
				t.Error(err)
			}
		}
	}
	u, err := url.Parse(e.url)
	if err != nil {
		t.Fatal(err)
	}
	proxy := testenv.NewProxy(t, u.Host)
	u.Host = proxy.Addr()
	cutPool, err := pg.ConnectDeliverer(ctx, u.String(), 8)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cutPool.Close)
	endpoint := e.newEndpoint(t, rc.url)
	var all []string
	for k := range 10 {
		all = append(all, keyed(fmt.Sprintf("k%d", k), 1, 20)...)
	}
	// Keys interleaved, as a partition's records come.
	slices.SortStableFunc(all, func(a, b string) int { return strings.Compare(a[strings.Index(a, "/"):], b[strings.Index(b, "/"):]) })
	ids := e.write(t, endpoint, all...)

	signals := delivery.NewTestSignals(t)
	e.quick(t, cutPool, 20*time.Millisecond, signals)
	e.waitFor(t, "every delivery answered once", func() bool {
		for _, id := range all {
			if rc.answered(id) == 0 {
				return false
			}
		}
		return true
	})
	signals.Checked.WaitUntil(20*time.Second, "the killed owner's check of a mark past every delivery", func(c delivery.MarkCheck) bool {
		return c.Ripe && c.Proposed > ids[len(ids)-1]
	})
	proxy.Cut()
	if _, err := e.pool.Exec(ctx, `DELETE FROM refused`); err != nil {
		t.Fatal(err)
	}
	e.quick(t, e.pool, 20*time.Millisecond, nil)
	e.waitFor(t, "every delivery recorded delivered", func() bool { return e.delivered(t) == len(all) })
	rc.inOrder(t, all)
}

// A 2xx is a heap-only update of its delivery (no index covers what it
// changes), and every attempt is counted in its endpoint's minute: the
// figures the console reads over a day.
func TestOutcomesAreHeapOnlyAndCountedPerMinute(t *testing.T) {
	e := newEnv(t)
	rc := newOrderLog(t)
	var failed sync.Map
	rc.fail = func(id string) bool {
		_, again := failed.LoadOrStore(id, true)
		return !again && strings.HasSuffix(id, "0") // the first attempt of every tenth
	}
	endpoint := e.newEndpoint(t, rc.url)
	ids := keyed("k", 1, 50)
	e.write(t, endpoint, ids...)
	stop := e.quick(t, e.pool, 20*time.Millisecond, nil)
	e.waitFor(t, "every delivery", func() bool { return e.delivered(t) == len(ids) })
	stop() // writes the figures it holds

	ctx := context.Background()
	e.waitFor(t, "the deliveries' updates counted", func() bool {
		var upd int
		if err := e.pool.QueryRow(ctx, `SELECT n_tup_upd FROM pg_stat_user_tables WHERE relname = 'deliveries'`).Scan(&upd); err != nil {
			t.Fatal(err)
		}
		return upd >= len(ids)+5
	})
	var upd, hot int
	if err := e.pool.QueryRow(ctx, `SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables WHERE relname = 'deliveries'`).Scan(&upd, &hot); err != nil {
		t.Fatal(err)
	}
	if hot != upd {
		t.Errorf("%d of the deliveries' %d updates were heap-only, want all", hot, upd)
	}
	h, err := endpoints.Store{Pool: e.pool}.Health(ctx, endpoint, time.Now().Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if h.Attempts != 55 || h.Delivered != 50 || h.Failed != 5 || h.SuccessRate == nil || *h.SuccessRate != 50.0/55 ||
		h.LatencyP50MS == nil || h.LatencyP99MS == nil {
		t.Errorf("health %+v: want 55 attempts, 50 delivered, 5 failed, latencies", h)
	}
}

// While a deliverer of the release before runs (its presence lock without
// the marks'), queue rows are written for it: turned on, with a queue row
// for every delivery pending, the fan-out's rows queued too; and off again
// once it is gone.
func TestQueueRowsAreWrittenWhileAnOlderDelivererRuns(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	// A disabled endpoint: nobody sends its deliveries, which stay pending.
	endpoint := e.newEndpoint(t, "https://example.com/hook")
	if _, err := (endpoints.Store{Pool: e.pool}).DisableEndpoint(ctx, endpoint); err != nil {
		t.Fatal(err)
	}
	e.write(t, endpoint, "a/1", "b/1")
	queued := func() int {
		var n int
		if err := e.pool.QueryRow(ctx, `SELECT count(*) FROM pending_deliveries WHERE endpoint_id = $1`, endpoint).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := queued(); n != 0 {
		t.Fatalf("%d queue rows with no deliverer of the release before", n)
	}
	old, err := e.pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer old.Release()
	if _, err := old.Exec(ctx, `SELECT pg_advisory_lock_shared(hashtext('sluice.deliverers'), hashtext(''))`); err != nil {
		t.Fatal(err)
	}
	e.quick(t, e.pool, 20*time.Millisecond, nil)
	e.waitFor(t, "queue rows for the pending deliveries", func() bool { return queued() == 2 })
	e.write(t, endpoint, "c/1")
	if n := queued(); n != 3 {
		t.Errorf("%d queue rows after a fan-out, want 3", n)
	}
	if _, err := old.Exec(ctx, `SELECT pg_advisory_unlock_shared(hashtext('sluice.deliverers'), hashtext(''))`); err != nil {
		t.Fatal(err)
	}
	e.waitFor(t, "queue rows off", func() bool {
		var written bool
		if err := e.pool.QueryRow(ctx, `SELECT written FROM delivery_queue_rows`).Scan(&written); err != nil {
			t.Fatal(err)
		}
		return !written
	})
	e.write(t, endpoint, "d/1")
	if n := queued(); n != 3 {
		t.Errorf("%d queue rows after a fan-out with none written, want 3", n)
	}
}

// A rollback replaces the deliverers first: the last deliverer of this
// release to stop leaves a queue row for every pending delivery and queue
// rows on, so one of the release before finds them; while another of this
// release runs, a stop leaves none.
func TestTheLastDelivererOfThisReleaseLeavesQueueRowsWhenItStops(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	endpoint := e.newEndpoint(t, "https://example.com/hook")
	if _, err := (endpoints.Store{Pool: e.pool}).DisableEndpoint(ctx, endpoint); err != nil {
		t.Fatal(err)
	}
	e.write(t, endpoint, "a/1", "b/1", "c/1")
	queued := func() (n int, written bool) {
		if err := e.pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM pending_deliveries WHERE endpoint_id = $1),
       (SELECT written FROM delivery_queue_rows)`, endpoint).Scan(&n, &written); err != nil {
			t.Fatal(err)
		}
		return n, written
	}
	present := func() int { // deliverers holding their presence lock
		var n int
		if err := e.pool.QueryRow(ctx, `SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 2
  AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
  AND classid::bigint = hashtext('sluice.deliverers')::bigint & 4294967295`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	first := e.quick(t, e.pool, 20*time.Millisecond, nil)
	second := e.quick(t, e.pool, 20*time.Millisecond, nil)
	e.waitFor(t, "both deliverers present", func() bool { return present() == 2 })
	first()
	// Its session ends a moment after it closed it: until then the other
	// still counts it among this release's deliverers.
	e.waitFor(t, "the first deliverer's locks gone", func() bool { return present() == 1 })
	if n, written := queued(); n != 0 || written {
		t.Fatalf("a deliverer stopped beside another of its release left %d queue rows (written %v), want none", n, written)
	}
	second()
	if n, written := queued(); n != 3 || !written {
		t.Fatalf("the last deliverer stopped left %d queue rows (written %v), want 3 and queue rows on", n, written)
	}
}
