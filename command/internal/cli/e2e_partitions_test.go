package cli

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sluicehq/sluice/command/internal/pipeline"
	"github.com/sluicehq/sluice/internal/store/lifecycle"
)

// An ingest process whose lifecycle manager has stopped (one pass at start,
// the next an hour away) and whose partitions run out: the operators'
// /readyz names "partitions" as soon as less than one interval is left, the
// public one ("partitions_now") once ingest's tables have none for now; a
// pass puts both right.
func TestPartitionsRunningOutFailReadiness(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dbURL, pool := ownDatabase(t, "partitions")
	life := lifecycle.Config{Every: time.Hour}
	pctx, cancel := context.WithCancel(ctx)
	p, err := pipeline.Start(pctx, pipeline.Config{DatabaseURL: dbURL, SecretKey: newKey(t), HTTPAddr: "127.0.0.1:0",
		AdminAddr: "127.0.0.1:0", Ingest: true, Lifecycle: life}, slog.New(slog.DiscardHandler))
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); _ = p.Wait() })
	public, admin := "http://"+p.Addr().String()+"/readyz", "http://"+p.AdminAddr().String()+"/readyz"

	// The process's first pass is done once its metric says so.
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(get(t, "http://"+p.AdminAddr().String()+"/metrics"), "sluice_lifecycle_passes_total 1") {
		if time.Now().After(deadline) {
			t.Fatal("the lifecycle manager's first pass did not complete")
		}
		time.Sleep(50 * time.Millisecond)
	}
	expect := func(when string, url string, status int, failing string) {
		t.Helper()
		got, r := readyz(t, url)
		if got != status || (failing != "" && r.Failed[failing] == "") {
			t.Fatalf("%s: %s answered %d %+v, want %d naming %q", when, url, got, r, status, failing)
		}
	}
	expect("at start", admin, http.StatusOK, "")
	expect("at start", public, http.StatusOK, "")

	today := time.Now().UTC().Truncate(24 * time.Hour).Format("20060102t150405")
	dropPartitions(t, pool, func(name string) bool { return !strings.Contains(name, "_p"+today+"_") })
	expect("only today's partitions left", admin, http.StatusServiceUnavailable, "partitions")
	expect("only today's partitions left", public, http.StatusOK, "")

	dropPartitions(t, pool, func(name string) bool { return strings.HasPrefix(name, "inbox_payloads_") })
	expect("no payload partition for now", public, http.StatusServiceUnavailable, "partitions_now")

	if _, err := lifecycle.New(life, pool, slog.New(slog.DiscardHandler), nil).Pass(ctx); err != nil {
		t.Fatal(err)
	}
	expect("after a pass", admin, http.StatusOK, "")
	expect("after a pass", public, http.StatusOK, "")
	if body := get(t, "http://"+p.AdminAddr().String()+"/metrics"); !strings.Contains(body, `sluice_lifecycle_partition_coverage_seconds{table="inbox_payloads"}`) {
		t.Fatal("no partition coverage gauge on /metrics")
	}
}

// dropPartitions drops the partitions of the time-partitioned tables
// whose names drop chooses.
func dropPartitions(t *testing.T, pool *pgxpool.Pool, drop func(string) bool) {
	t.Helper()
	rows, err := pool.Query(context.Background(), `SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
		WHERE i.inhparent IN ('inbox_payloads'::regclass, 'inbox_duplicates'::regclass, 'inbox_conflicts'::regclass, 'dispatch_deliveries'::regclass)`)
	if err != nil {
		t.Fatal(err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if !drop(n) {
			continue
		}
		if _, err := pool.Exec(context.Background(), "DROP TABLE "+pgx.Identifier{n}.Sanitize()); err != nil {
			t.Fatal(err)
		}
	}
}

func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return string(body)
}
