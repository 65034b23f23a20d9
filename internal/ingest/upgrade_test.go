package ingest_test

import (
	"context"
	"crypto/sha256"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"

	"github.com/sluicehq/sluice/internal/ingest"
	"github.com/sluicehq/sluice/internal/pg"
	"github.com/sluicehq/sluice/internal/testenv"
	"github.com/sluicehq/sluice/migrations"
)

// beforeLifecycle is the schema version of the commit before issue 13.
const beforeLifecycle = 8

// databaseAt is a fresh database migrated up to version.
func databaseAt(t *testing.T, version int64) string {
	t.Helper()
	ctx := context.Background()
	services, err := testenv.Find()
	if err != nil {
		t.Fatal(err)
	}
	admin, err := pgx.Connect(ctx, services.DatabaseURL)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	name := "sluice_test_upgrade_" + testenv.RandomSuffix()
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn, err := pgx.Connect(context.Background(), services.DatabaseURL)
		if err == nil {
			_, _ = conn.Exec(context.Background(), "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
			conn.Close(context.Background())
		}
	})
	u, _ := url.Parse(services.DatabaseURL)
	u.Path = "/" + name
	pool, err := pg.Connect(ctx, u.String(), 2)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	db := stdlib.OpenDBFromPool(pool)
	defer db.Close()
	provider, err := goose.NewProvider(goose.DialectPostgres, db, migrations.FS,
		goose.WithDisableGlobalRegistry(true), goose.WithTableName("sluice_schema_migrations"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := provider.UpTo(ctx, version); err != nil {
		t.Fatal(err)
	}
	return u.String()
}

// oldWrite is what ingest wrote before issue 13: the body in the inbox row,
// a duplicate's record in inbox_duplicates.
// Its statements lock tables in the order the old ones did.
const (
	oldWrite = `WITH i AS (
	INSERT INTO inbox (tenant_id, source_id, source_account, event_id, event_type, status, body_sha256, body)
	VALUES ($1, $2, $3, $4, 'invoice.paid', 'published', $5, $6) RETURNING id
), d AS (
	INSERT INTO inbox_duplicates (inbox_id, received_at) SELECT id, now() FROM i
)
SELECT id FROM i`
	oldConflict = `INSERT INTO inbox_conflicts (inbox_id, body_sha256, body) VALUES ($1, $2, $3)`
)

// An existing deployment moves to the new layout by its start-up migration
// while the old ingest keeps writing: no write fails or waits long, ids stay,
// and the new ingest judges redeliveries of old events by the old bodies.
func TestUpgradeKeepsOldWritersIdsAndDedup(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dbURL := databaseAt(t, beforeLifecycle)
	pool, err := pg.Connect(ctx, dbURL, 4)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	legacySource, legacyTenant := "00000000-0000-4000-8000-000000000013", "00000000-0000-4000-8000-000000000031"
	// Bodies are made once: paid stamps the current second into them.
	var bodies sync.Map
	old := func(id string) []byte {
		body, _ := bodies.LoadOrStore(id, paid(id, "in_"+id))
		return body.([]byte)
	}
	ids := map[string]int64{}
	for i := range 20 {
		ev := fmt.Sprintf("evt_old_%d", i)
		sum := sha256.Sum256(old(ev))
		var id int64
		if err := pool.QueryRow(ctx, oldWrite, legacyTenant, legacySource, "acct", ev, sum[:], old(ev)).Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids[ev] = id
	}

	// The old ingest goes on writing while the migration runs.
	var (
		wg       sync.WaitGroup
		stop     = make(chan struct{})
		writeErr error
		writes   atomic.Int64
		slowest  time.Duration
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			ev := fmt.Sprintf("evt_during_%d", i)
			sum := sha256.Sum256(old(ev))
			began := time.Now()
			var id int64
			if err := pool.QueryRow(ctx, oldWrite, legacyTenant, legacySource, "acct", ev, sum[:], old(ev)).Scan(&id); err != nil {
				writeErr = err
				return
			}
			if _, err := pool.Exec(ctx, oldConflict, ids["evt_old_0"], sum[:], old(ev)); err != nil {
				writeErr = err
				return
			}
			slowest = max(slowest, time.Since(began))
			writes.Add(1)
		}
	}()
	testenv.Eventually(t, 10*time.Second, "the old writer is writing", func() (bool, error) { return writes.Load() >= 5, nil })
	began := time.Now()
	if err := pg.Migrate(ctx, pool, migrations.FS, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	took := time.Since(began)
	close(stop)
	wg.Wait()
	written := int(writes.Load())
	if writeErr != nil {
		t.Fatalf("an old writer's statement failed during the migration: %v", writeErr)
	}
	if took > 5*time.Second || slowest > 5*time.Second {
		t.Fatalf("migration took %s, slowest old write %s: ingest would stop longer than a few seconds", took, slowest)
	}
	var n int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM inbox WHERE event_id LIKE 'evt_during_%'`).Scan(&n); err != nil || n != written {
		t.Fatalf("rows written during the migration: %d in the inbox, %d committed (%v)", n, written, err)
	}
	for ev, id := range ids {
		var got int64
		if err := pool.QueryRow(ctx, `SELECT id FROM inbox WHERE event_id = $1`, ev).Scan(&got); err != nil || got != id {
			t.Fatalf("%s: id %d after the migration, %d before (%v)", ev, got, id, err)
		}
	}

	// The new ingest, on a source the old rows are re-pointed to.
	b := setupIn(t, ingest.Config{}, dbURL, dbURL)
	if _, err := pool.Exec(ctx, `UPDATE inbox SET tenant_id = $1, source_id = $2, source_account = s.account
		FROM sources s WHERE s.id = $2 AND inbox.source_id = $3`, b.tenantID, b.sourceID, legacySource); err != nil {
		t.Fatal(err)
	}
	before := b.inbox(t)
	if got := b.send(t, old("evt_old_3"), nil); got != http.StatusOK {
		t.Fatalf("old event sent again: status %d, want 200 (duplicate of the body in the old row)", got)
	}
	if got := b.send(t, []byte(strings.ReplaceAll(string(old("evt_old_4")), `,"`, `, "`)), nil); got != http.StatusOK {
		t.Fatalf("old event re-serialised: status %d, want 200 (same JSON as the old row's body)", got)
	}
	if got := b.send(t, paid("evt_old_5", "in_changed"), nil); got != http.StatusAccepted {
		t.Fatalf("old event changed: status %d, want 202 (conflict kept)", got)
	}
	if after := b.inbox(t); after != before {
		t.Fatalf("inbox rows %d -> %d: a redelivery of an old event was accepted anew", before, after)
	}
	if n := b.count(t, `SELECT count(*) FROM delivery_log WHERE tenant_id = $1 AND outcome = 'duplicate'`); n != 20+written+2 {
		t.Fatalf("duplicates in the delivery log = %d, want the old ones (%d) and the 2 new", n, 20+written)
	}
	// Once nothing in the replaced tables is within its horizon, they go.
	if r := passAt(t, dbURL, 31*24*time.Hour); !r.LegacyDropped {
		t.Fatalf("pass 31 days on: %+v, want the replaced tables dropped", r)
	}
	if n := b.count(t, `SELECT count(*) FROM delivery_log WHERE tenant_id = $1`); n != 0 {
		t.Fatalf("delivery log after every horizon: %d rows", n)
	}
}
