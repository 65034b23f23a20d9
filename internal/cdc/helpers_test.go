package cdc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicehq/sluice/internal/envelope"
	"github.com/sluicehq/sluice/internal/kafka"
	"github.com/sluicehq/sluice/internal/pg"
	"github.com/sluicehq/sluice/internal/testenv"
)

// bundle is one test's world: a database with its outbox, a slot name, a
// topic, and the shared Kafka.
type bundle struct {
	t       testing.TB
	db      *testenv.Database
	pool    *pgxpool.Pool
	prefix  string // topic prefix, also given to `sluice cdc`
	topic   string
	slot    string
	brokers []string
}

func setup(t testing.TB, name string) *bundle {
	t.Helper()
	return setupWith(t, name, testenv.Require(t).Brokers)
}

// setupWith is setup on the Kafka of brokers (the secured broker's
// PLAINTEXT listener, whose user may do anything).
func setupWith(t testing.TB, name string, brokers []string) *bundle {
	t.Helper()
	services := testenv.Require(t)
	ctx := context.Background()
	db, err := services.NewDatabase(ctx, "cdc_"+name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Drop)
	pool, err := pg.Connect(ctx, db.URL, 8)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	// Runs after the relays stopped (cleanups run last first) and before the
	// database is dropped: a walsender outlives its client for a moment, and
	// an active slot cannot be dropped.
	t.Cleanup(func() {
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			var active bool
			if err := pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_replication_slots WHERE database = current_database() AND active)`).Scan(&active); err != nil || !active {
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	})
	suffix := testenv.RandomSuffix()
	b := &bundle{t: t, db: db, pool: pool, prefix: "cdctest" + suffix, slot: "sluice_cdc_" + name + "_" + suffix, brokers: brokers}
	b.topic = envelope.Topics{Prefix: b.prefix}.Resource("events")
	admin, err := kafka.NewClient(kafka.Config{Brokers: brokers})
	if err != nil {
		t.Fatal(err)
	}
	if err := kafka.EnsureTopics(ctx, kadm.NewClient(admin), kafka.TopicSpec{Partitions: 6, Retention: time.Hour}, b.topic); err != nil {
		admin.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		defer admin.Close()
		_ = kafka.DeleteTopicsWithPrefix(context.Background(), kadm.NewClient(admin), b.prefix+".")
	})
	return b
}

// urlWith is the database URL with extra query parameters.
func (b *bundle) urlWith(params map[string]string) string {
	u, err := url.Parse(b.db.URL)
	if err != nil {
		b.t.Fatal(err)
	}
	q := u.Query()
	for k, v := range params {
		q.Set(k, v)
	}
	u.RawQuery = strings.ReplaceAll(q.Encode(), "+", "%20") // pgx reads + literally
	return u.String()
}

// relay runs an in-process relay until the test ends (or stop is called).
type relay struct {
	*Relay
	reg  *prometheus.Registry
	stop func()
	done chan struct{}
}

func (b *bundle) startRelay(cfg Config, dbURL string, kafkaOpts ...kgo.Opt) *relay {
	b.t.Helper()
	return b.startRelayOn(b.pool, cfg, dbURL, kafkaOpts...)
}

// startRelayOn runs a relay whose pool is pool (a test may route it through
// a proxy).
func (b *bundle) startRelayOn(pool *pgxpool.Pool, cfg Config, dbURL string, kafkaOpts ...kgo.Opt) *relay {
	b.t.Helper()
	cfg.Slot = b.slot
	cfg.DatabaseURL = dbURL
	if kafkaOpts == nil {
		kafkaOpts = []kgo.Opt{kgo.SeedBrokers(b.brokers...)}
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	reg := prometheus.NewRegistry()
	r := &relay{Relay: New(cfg, log, pool, kafkaOpts, reg), reg: reg, done: make(chan struct{})}
	r.testSignals.init(b.t)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		defer close(r.done)
		_ = r.Run(ctx)
	}()
	var once sync.Once
	r.stop = func() {
		once.Do(func() {
			cancel()
			<-r.done
		})
	}
	b.t.Cleanup(r.stop)
	return r
}

// waitStreaming waits until the relay streams from its slot (recorded in
// cdc_slots), so rows committed from then on are in the stream.
func (r *relay) waitStreaming(t testing.TB) {
	t.Helper()
	r.testSignals.streaming.WaitOrTimeout(time.Minute, "the relay to stream from its slot")
}

// process is a `sluice cdc` child process.
type process struct {
	cmd *exec.Cmd
	log string
}

// startProcess runs `sluice cdc` on the bundle's slot; appName tells which
// process holds the slot (pg_stat_activity.application_name).
func (b *bundle) startProcess(appName string) *process {
	b.t.Helper()
	logPath := filepath.Join(b.t.TempDir(), appName+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		b.t.Fatal(err)
	}
	defer logFile.Close()
	cmd := exec.Command(sluiceBin(b.t), "cdc")
	cmd.Env = append(os.Environ(),
		"SLUICE_DATABASE_URL="+b.urlWith(map[string]string{"application_name": appName}),
		"SLUICE_KAFKA_BROKERS="+b.brokers[0],
		"SLUICE_SLOT="+b.slot,
		"SLUICE_TOPIC_PREFIX="+b.prefix,
		"SLUICE_HTTP_ADDR=127.0.0.1:0",
		"SLUICE_ADMIN_ADDR=127.0.0.1:0",
		"SLUICE_TOPIC_PARTITIONS=6",
		"SLUICE_LOG_LEVEL=warn",
		"SLUICE_MIGRATE=false",
	)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		b.t.Fatal(err)
	}
	p := &process{cmd: cmd, log: logPath}
	b.t.Cleanup(func() {
		p.kill(syscall.SIGKILL)
		if b.t.Failed() {
			out, _ := os.ReadFile(logPath)
			b.t.Logf("%s log:\n%s", appName, out)
		}
	})
	return p
}

// kill sends sig and waits for the process to exit.
func (p *process) kill(sig syscall.Signal) {
	if p.cmd.ProcessState != nil {
		return
	}
	_ = p.cmd.Process.Signal(sig)
	_ = p.cmd.Wait()
}

// slotHolder is the application_name of the connection streaming the slot,
// or "" when no one does.
func (b *bundle) slotHolder(ctx context.Context) (string, int32) {
	var app string
	var pid int32
	err := b.pool.QueryRow(ctx, `SELECT a.application_name, a.pid FROM pg_replication_slots s
		JOIN pg_stat_activity a ON a.pid = s.active_pid WHERE s.slot_name = $1`, b.slot).Scan(&app, &pid)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		b.t.Fatalf("look up the slot's holder: %v", err)
	}
	return app, pid
}

// waitForSlot waits until a relay streams from the slot. A slot being
// created is already active, before its consistent point: rows committed
// then would never be streamed, so the slot counts only once the relay
// recorded it in cdc_slots.
func (b *bundle) waitForSlot(what string) int32 {
	b.t.Helper()
	var pid int32
	testenv.Eventually(b.t, time.Minute, what, func() (bool, error) {
		var created bool
		if err := b.pool.QueryRow(context.Background(), `SELECT EXISTS (SELECT 1 FROM cdc_slots WHERE slot = $1)`, b.slot).Scan(&created); err != nil || !created {
			return false, err
		}
		_, pid = b.slotHolder(context.Background())
		return pid != 0, nil
	})
	return pid
}

// loader writes outbox rows the way ingest does, on a few resource keys,
// each row's payload "key:seq" numbering the key's rows in commit order.
type loader struct {
	b      *bundle
	keys   int
	seq    map[string]int
	rows   atomic.Int64
	stop   chan struct{}
	done   chan error
	bigTxn int // every so often a transaction this large
}

func (b *bundle) startLoader(keys, bigTxn int, pause time.Duration) *loader {
	l := &loader{b: b, keys: keys, seq: map[string]int{}, stop: make(chan struct{}), done: make(chan error, 1), bigTxn: bigTxn}
	go func() { l.done <- l.run(pause) }()
	b.t.Cleanup(func() { l.halt() })
	return l
}

func (l *loader) run(pause time.Duration) error {
	ctx := context.Background()
	for i := 0; ; i++ {
		select {
		case <-l.stop:
			return nil
		default:
		}
		n := 1 + rand.IntN(5)
		if l.bigTxn > 0 && i%50 == 49 {
			n = l.bigTxn
		}
		if err := l.insert(ctx, n); err != nil {
			return err
		}
		if pause > 0 {
			time.Sleep(pause) // pacing the load, not waiting for anything
		}
	}
}

// insert commits one transaction of n rows.
func (l *loader) insert(ctx context.Context, n int) error {
	tx, err := l.b.pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback(ctx) }()
	next := map[string]int{}
	for range n {
		key := fmt.Sprintf("tenant/thing/k%02d", rand.IntN(l.keys))
		if _, ok := next[key]; !ok {
			next[key] = l.seq[key]
		}
		next[key]++
		if err := insertRow(ctx, tx, l.b.topic, key, next[key]); err != nil {
			return err
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return err
	}
	for k, v := range next {
		l.seq[k] = v
	}
	l.rows.Add(int64(n))
	return nil
}

// halt stops the load and returns how many rows it committed.
func (l *loader) halt() int {
	select {
	case <-l.stop:
	default:
		close(l.stop)
		if err := <-l.done; err != nil {
			l.b.t.Errorf("loader: %v", err)
		}
	}
	return int(l.rows.Load())
}

// collector reads the bundle's topic from the start, outside any group.
type collector struct {
	mu     sync.Mutex
	count  map[string]int      // outbox id -> times seen
	byKey  map[string][]string // key -> outbox ids in partition order
	total  int
	client *kgo.Client
}

func (b *bundle) collect() *collector {
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.brokers...), kgo.ConsumeTopics(b.topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		b.t.Fatal(err)
	}
	c := &collector{count: map[string]int{}, byKey: map[string][]string{}, client: cl}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			fetches := cl.PollFetches(ctx)
			c.mu.Lock()
			fetches.EachRecord(func(r *kgo.Record) {
				var id string
				for _, h := range r.Headers {
					if h.Key == envelope.HeaderOutboxID {
						id = string(h.Value)
					}
				}
				c.count[id]++
				c.byKey[string(r.Key)] = append(c.byKey[string(r.Key)], id)
				c.total++
			})
			c.mu.Unlock()
		}
	}()
	b.t.Cleanup(func() {
		cancel()
		<-done
		cl.Close()
	})
	return c
}

// tableRow is what the table says a row is.
type tableRow struct {
	id  string
	key string
}

// outbox lists the table's rows (optionally only those since a time), in id order.
func (b *bundle) outbox(since time.Time) []tableRow {
	rows, err := b.pool.Query(context.Background(), `SELECT id::text, convert_from(key, 'UTF8') FROM outbox WHERE created_at >= $1 ORDER BY outbox.id`, since)
	if err != nil {
		b.t.Fatal(err)
	}
	defer rows.Close()
	var out []tableRow
	for rows.Next() {
		var r tableRow
		if err := rows.Scan(&r.id, &r.key); err != nil {
			b.t.Fatal(err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		b.t.Fatal(err)
	}
	return out
}

// waitForAll waits until every row is in Kafka, then checks that, per key,
// the first time each row appears follows the table's order, and returns how
// many records were duplicates.
func (c *collector) waitForAll(t *testing.T, rows []tableRow, timeout time.Duration) (duplicates int) {
	t.Helper()
	testenv.Eventually(t, timeout, fmt.Sprintf("%d outbox rows in Kafka", len(rows)), func() (bool, error) {
		c.mu.Lock()
		defer c.mu.Unlock()
		missing := 0
		for _, r := range rows {
			if c.count[r.id] == 0 {
				missing++
			}
		}
		if missing > 0 {
			return false, fmt.Errorf("%d of %d rows missing", missing, len(rows))
		}
		return true, nil
	})
	c.mu.Lock()
	defer c.mu.Unlock()
	want := map[string][]string{}
	wanted := map[string]bool{}
	for _, r := range rows {
		want[r.key] = append(want[r.key], r.id)
		wanted[r.id] = true
	}
	for key, ids := range want {
		var first []string
		seen := map[string]bool{}
		for _, id := range c.byKey[key] {
			if wanted[id] && !seen[id] {
				seen[id] = true
				first = append(first, id)
			}
		}
		if !slicesEqual(first, ids) {
			t.Errorf("key %s: records first appear in the order %v, committed as %v", key, head(first), head(ids))
		}
	}
	for _, r := range rows {
		duplicates += c.count[r.id] - 1
	}
	return duplicates
}

func slicesEqual(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func head(s []string) []string {
	if len(s) > 10 {
		return s[:10]
	}
	return s
}

// insertRow writes one outbox row in the envelope format.
func insertRow(ctx context.Context, db interface {
	Exec(context.Context, string, ...any) (pgconn.CommandTag, error)
}, topic, key string, seq int) error {
	headers := fmt.Sprintf(`{"ce_specversion":"1.0","ce_id":"evt_%s_%d","ce_type":"test.row","ce_tenantid":"tenant","ce_partitionkey":%s}`,
		key, seq, strconv.Quote(key))
	_, err := db.Exec(ctx, `INSERT INTO outbox (topic, key, headers, payload) VALUES ($1, $2, $3, $4)`,
		topic, []byte(key), headers, bytes.Repeat([]byte("x"), 64))
	return err
}

// kafkaThrough makes every broker connection go through the proxy, whatever
// address the cluster's metadata advertises.
func kafkaThrough(proxy *testenv.Proxy) []kgo.Opt {
	return []kgo.Opt{kgo.SeedBrokers(proxy.Addr()), kgo.Dialer(func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, proxy.Addr())
	})}
}

func (c *collector) seen() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.total
}

// gauge reads one of the relay's gauges.
func (r *relay) gauge(t testing.TB, name string) (float64, bool) {
	m := r.metric(t, name)
	return m.GetGauge().GetValue(), m != nil
}

// counter reads one of the relay's counters.
func (r *relay) counter(t testing.TB, name string) float64 {
	return r.metric(t, name).GetCounter().GetValue()
}

func (r *relay) metric(t testing.TB, name string) *dto.Metric {
	t.Helper()
	families, err := r.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == name && len(f.GetMetric()) > 0 {
			return f.GetMetric()[0]
		}
	}
	return nil
}

// slotGauge reads gauge name of the bundle's slot from fresh scrape-time
// collectors (a collector's scrape cache would serve an earlier read); -1
// when the slot has no such series.
func (b *bundle) slotGauge(t testing.TB, name string) float64 {
	t.Helper()
	reg := prometheus.NewRegistry()
	log := slog.New(slog.DiscardHandler)
	reg.MustRegister(NewSlotCollector(b.pool, b.slot, 5*time.Second, log), NewParkedCollector(b.pool, b.slot, 5*time.Second, log))
	return testenv.Metric(t, reg, name, map[string]string{"slot": b.slot})
}
