package lifecycle_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluicehq/sluice/internal/consumers"
	"github.com/sluicehq/sluice/internal/pg"
	"github.com/sluicehq/sluice/internal/store/lifecycle"
	"github.com/sluicehq/sluice/internal/testenv"
)

func TestMain(m *testing.M) {
	if _, err := testenv.Find(); err != nil {
		fmt.Fprintln(os.Stderr, "lifecycle tests:", err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// bundle is one test's database (the manager moves time, so tests do not
// share one), a manager on a clock the test moves, and its metrics.
type bundle struct {
	pool *pgxpool.Pool
	reg  *prometheus.Registry
	m    *lifecycle.Manager

	mu  sync.Mutex
	now time.Time
}

// setup starts the clock five days on, past the daily partitions the
// migration made, so the manager cuts its own (minutes here).
func setup(t *testing.T) *bundle {
	t.Helper()
	services, err := testenv.Find()
	if err != nil {
		t.Fatal(err)
	}
	db, err := services.NewDatabase(context.Background(), "lifecycle")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Drop)
	pool, err := pg.Connect(context.Background(), db.URL, 4)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	b := &bundle{pool: pool, now: time.Now().Add(5 * 24 * time.Hour).Truncate(time.Minute)}
	b.configure(func(*lifecycle.Config) {})
	return b
}

// configure replaces the manager, and its metrics, by one with setup's
// configuration as change leaves it.
func (b *bundle) configure(change func(*lifecycle.Config)) {
	cfg := lifecycle.Config{PayloadHorizon: 2 * time.Minute, KeyHorizon: 5 * time.Minute, Interval: time.Minute, Ahead: 2, Now: b.clock}
	change(&cfg)
	b.reg = prometheus.NewRegistry()
	b.m = lifecycle.New(cfg, b.pool, slog.New(slog.DiscardHandler), b.reg)
}

func (b *bundle) log() *slog.Logger { return slog.New(slog.DiscardHandler) }

func (b *bundle) clock() time.Time {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.now
}

func (b *bundle) advance(d time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.now = b.now.Add(d)
}

func (b *bundle) pass(t *testing.T) lifecycle.Report {
	t.Helper()
	r, err := b.m.Pass(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// accept stores an event as ingest does (key row, payload row) at the
// clock's time, and returns its inbox id.
func (b *bundle) accept(t *testing.T, tenant string, body string) int64 {
	t.Helper()
	var id int64
	err := b.pool.QueryRow(context.Background(), `WITH i AS (
		INSERT INTO inbox (tenant_id, source_id, source_account, event_id, event_type, status, body_sha256, received_at)
		VALUES ($1, $1, 'acct', $2, 'test.event', 'published', sha256($3::bytea), $4) RETURNING id, received_at)
		INSERT INTO inbox_payloads (inbox_id, received_at, body) SELECT id, received_at, $3::bytea FROM i RETURNING inbox_id`,
		tenant, uuid.NewString(), []byte(body), b.clock()).Scan(&id)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func (b *bundle) count(t *testing.T, query string, args ...any) int {
	t.Helper()
	var n int
	if err := b.pool.QueryRow(context.Background(), query, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func (b *bundle) partitions(t *testing.T, table string) []string {
	t.Helper()
	rows, err := b.pool.Query(context.Background(),
		`SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = $1::regclass ORDER BY 1`, table)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		out = append(out, n)
	}
	return out
}

func TestPartitionsRollAndAgedOnesAreDroppedWhole(t *testing.T) {
	t.Parallel()
	b := setup(t)
	if r := b.pass(t); r.Created != 12 || r.Dropped != 16 {
		t.Fatalf("first pass: %+v, want 3 minute partitions per table created and the migration's 4 daily ones dropped", r)
	}
	tenant := uuid.NewString()
	old := b.accept(t, tenant, `{"n":1}`)
	b.advance(time.Minute)
	kept := b.accept(t, tenant, `{"n":2}`)

	// Three minutes on, the first minute's payload partition ended more
	// than two minutes ago; the second's has not.
	b.advance(2 * time.Minute)
	r := b.pass(t)
	if r.Dropped != 2 { // payloads and conflicts of the first minute
		t.Fatalf("pass at +3m: %+v, want 2 partitions dropped", r)
	}
	if n := b.count(t, `SELECT count(*) FROM inbox_payloads WHERE inbox_id = $1`, old); n != 0 {
		t.Fatalf("payload of the first minute kept (%d rows)", n)
	}
	if n := b.count(t, `SELECT count(*) FROM inbox_payloads WHERE inbox_id = $1`, kept); n != 1 {
		t.Fatalf("payload within the horizon dropped (%d rows)", n)
	}
	if n := b.count(t, `SELECT count(*) FROM inbox WHERE tenant_id = $1`, tenant); n != 2 {
		t.Fatalf("keys = %d, want both kept (key horizon 5m)", n)
	}
	for _, table := range []string{"inbox_payloads", "inbox_conflicts", "inbox_duplicates"} {
		parts := b.partitions(t, table)
		last := parts[len(parts)-1]
		if want := "_" + b.clock().Add(3*time.Minute).UTC().Format("20060102t150405"); !strings.HasSuffix(last, want) {
			t.Errorf("%s: newest partition %s, want one ending at now+3m (%s)", table, last, want)
		}
	}
	if got := metric(t, b.reg, "sluice_lifecycle_partitions_dropped_total", "inbox_payloads"); got != 5 {
		t.Errorf("sluice_lifecycle_partitions_dropped_total{table=inbox_payloads} = %v, want 5 (4 daily + 1 minute)", got)
	}

	// Six minutes on, both keys are past the 5-minute key horizon.
	b.advance(6 * time.Minute)
	if r := b.pass(t); r.KeysDeleted != 2 {
		t.Fatalf("pass at +9m: %+v, want both keys deleted", r)
	}
	if got := metric(t, b.reg, "sluice_lifecycle_keys_deleted_total", ""); got != 2 {
		t.Errorf("sluice_lifecycle_keys_deleted_total = %v, want 2", got)
	}
}

// What a consumer (or a dead-letter replay) asks for after its payload is
// gone is answered expired, with why; only an id that was never the
// tenant's is not found.
func TestClaimAfterPayloadIsGoneAnswersExpired(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.pass(t)
	tenant := uuid.NewString()
	id := b.accept(t, tenant, `{"big":true}`)
	claim := func() error {
		_, err := consumers.ClaimedBody(context.Background(), b.pool, id, tenant)
		return err
	}
	if body, err := consumers.ClaimedBody(context.Background(), b.pool, id, tenant); err != nil || string(body) != `{"big":true}` {
		t.Fatalf("claim within the horizon: %q, %v", body, err)
	}
	if _, err := consumers.ClaimedBody(context.Background(), b.pool, id, uuid.NewString()); err == nil || errors.Is(err, consumers.ErrPayloadExpired) {
		t.Fatalf("claim by another tenant: %v, want not found", err)
	}
	b.advance(4 * time.Minute)
	b.pass(t)
	if err := claim(); !errors.Is(err, consumers.ErrPayloadExpired) || !strings.Contains(err.Error(), "payload horizon") || !consumers.IsPermanent(err) {
		t.Fatalf("claim past the payload horizon: %v, want a permanent ErrPayloadExpired", err)
	}
	b.advance(10 * time.Minute)
	if r := b.pass(t); r.KeysDeleted != 1 {
		t.Fatalf("pass past the key horizon: %+v, want the key deleted", r)
	}
	b.accept(t, tenant, `{}`) // a newer key, so the expired id is below every kept one
	if err := claim(); !errors.Is(err, consumers.ErrPayloadExpired) || !strings.Contains(err.Error(), "key horizon") {
		t.Fatalf("claim past the key horizon: %v, want ErrPayloadExpired", err)
	}
}

// One manager works at a time: while another holds the lock, a pass does
// nothing.
func TestPassSkipsWhileAnotherManagerWorks(t *testing.T) {
	t.Parallel()
	b := setup(t)
	conn, err := b.pool.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	if _, err := conn.Exec(context.Background(), `SELECT pg_advisory_lock(hashtextextended('sluice.lifecycle', 0))`); err != nil {
		t.Fatal(err)
	}
	if r := b.pass(t); !r.Skipped || r.Created != 0 {
		t.Fatalf("pass while locked: %+v, want skipped", r)
	}
	if _, err := conn.Exec(context.Background(), `SELECT pg_advisory_unlock(hashtextextended('sluice.lifecycle', 0))`); err != nil {
		t.Fatal(err)
	}
	if r := b.pass(t); r.Skipped || r.Created == 0 {
		t.Fatalf("pass after the lock was released: %+v, want work done", r)
	}
}

// metric reads a counter or gauge of reg, by its table label when table
// is set; 0 when it has no such series.
func metric(t *testing.T, reg *prometheus.Registry, name, table string) float64 {
	t.Helper()
	labels := map[string]string{}
	if table != "" {
		labels["table"] = table
	}
	return max(testenv.Metric(t, reg, name, labels), 0)
}
