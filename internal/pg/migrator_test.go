package pg_test

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sluicehq/sluice/internal/pg"
	"github.com/sluicehq/sluice/internal/testenv"
	"github.com/sluicehq/sluice/internal/testsignal"
)

// databaseWithT is a database of its own, dropped after the test, with
// one migration applied: table t.
func databaseWithT(t *testing.T) *pgxpool.Pool {
	t.Helper()
	_, pool := testenv.EmptyDatabase(t, "migrator")
	if _, err := pg.MigrateWith(context.Background(), pool, files("00001_t.sql", tableT), pg.MigrateOptions{}, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	return pool
}

// retries is a signal of the migration's timed-out attempts.
func retries(t *testing.T) *testsignal.Signal[pg.Retry] {
	var s testsignal.Signal[pg.Retry]
	s.Init(t)
	return &s
}

// files are migrations as goose reads them.
func files(kv ...string) fstest.MapFS {
	fsys := fstest.MapFS{}
	for i := 0; i < len(kv); i += 2 {
		fsys[kv[i]] = &fstest.MapFile{Data: []byte(kv[i+1])}
	}
	return fsys
}

const tableT = "-- +goose Up\nCREATE TABLE t (id bigserial PRIMARY KEY, v int);\n"

// hold opens a transaction on its own connection that runs stmt and stays
// open until the returned function ends it.
func hold(t *testing.T, pool *pgxpool.Pool, stmt string) func() {
	t.Helper()
	ctx := context.Background()
	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, stmt); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	end := func() {
		once.Do(func() {
			_ = tx.Commit(ctx)
			conn.Release()
		})
	}
	t.Cleanup(end)
	return end
}

// migrate runs MigrateWith in the background; the returned channel gets
// its outcome.
type outcome struct {
	report pg.MigrateReport
	err    error
}

func migrate(pool *pgxpool.Pool, fsys fstest.MapFS, opts pg.MigrateOptions) chan outcome {
	done := make(chan outcome, 1)
	go func() {
		r, err := pg.MigrateWith(context.Background(), pool, fsys, opts, slog.New(slog.DiscardHandler))
		done <- outcome{r, err}
	}()
	return done
}

func wait(t *testing.T, done chan outcome) outcome {
	t.Helper()
	select {
	case o := <-done:
		return o
	case <-time.After(60 * time.Second):
		t.Fatal("the migration did not end within a minute")
		return outcome{}
	}
}

// A migration that must wait for a lock (an ALTER TABLE behind a long
// reader) waits at most its lock timeout, gives way, and is tried again
// until the reader is done: meanwhile the table's writers, queued behind
// it, wait at most about that timeout, never until the reader ends.
func TestAMigrationBehindALongReaderGivesWayToWritersAndIsTriedAgain(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := databaseWithT(t)
	endReader := hold(t, pool, `SELECT count(*) FROM t`) // a long report: ACCESS SHARE until it ends

	// A writer, as ingest: an insert every few milliseconds, timed.
	stop := make(chan struct{})
	var slowest time.Duration
	var writes sync.WaitGroup
	writes.Add(1)
	go func() {
		defer writes.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			began := time.Now()
			if _, err := pool.Exec(ctx, `INSERT INTO t (v) VALUES (1)`); err != nil {
				t.Error(err)
				return
			}
			slowest = max(slowest, time.Since(began))
			time.Sleep(5 * time.Millisecond) // the writer's own pace, not a synchronisation
		}
	}()

	const lockTimeout = 300 * time.Millisecond
	retried := retries(t)
	done := migrate(pool, files("00001_t.sql", tableT, "00002_w.sql", "-- +goose Up\nALTER TABLE t ADD COLUMN w int;\n"),
		pg.MigrateOptions{LockTimeout: lockTimeout, Backoff: 200 * time.Millisecond, Attempts: 30, Retried: retried.Signal})
	for range 3 {
		r := retried.WaitOrTimeout(30*time.Second, "the migration to give up waiting for its lock")
		if r.Version != 2 || r.Waited < lockTimeout {
			t.Errorf("retry %+v: want version 2, having waited at least %s", r, lockTimeout)
		}
	}
	endReader()
	o := wait(t, done)
	close(stop)
	writes.Wait()
	if o.err != nil {
		t.Fatalf("migrate: %v", o.err)
	}
	if len(o.report.Retries) < 3 || o.report.To != 2 || o.report.Stalled() < 3*lockTimeout {
		t.Errorf("report %+v (stalled %s): want 3 retries or more, version 2, at least %s stalled", o.report, o.report.Stalled(), 3*lockTimeout)
	}
	var has bool
	if err := pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM information_schema.columns WHERE table_name = 't' AND column_name = 'w')`).Scan(&has); err != nil || !has {
		t.Fatalf("column w after the migration: %v %v", has, err)
	}
	// The writer waited behind each attempt for at most the lock timeout
	// (and its own insert's time, a second at most on a busy machine), not
	// for the reader, held past three attempts and their pauses.
	if slowest > lockTimeout+time.Second {
		t.Errorf("the slowest insert took %s: longer than the lock timeout (%s) and a second", slowest, lockTimeout)
	}
}

// A migration that never gets its lock fails after its attempts, in words,
// and leaves the schema as it was.
func TestAMigrationThatNeverGetsItsLockFailsAfterItsAttempts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := databaseWithT(t)
	hold(t, pool, `SELECT count(*) FROM t`)
	o := wait(t, migrate(pool, files("00001_t.sql", tableT, "00002_w.sql", "-- +goose Up\nALTER TABLE t ADD COLUMN w int;\n"),
		pg.MigrateOptions{LockTimeout: 100 * time.Millisecond, Backoff: 50 * time.Millisecond, Attempts: 3}))
	if !errors.Is(o.err, pg.ErrLocksNotGranted) || len(o.report.Retries) != 2 || o.report.To != 1 {
		t.Fatalf("migrate = %+v, %v: want ErrLocksNotGranted after 3 attempts (2 retries), schema still 1", o.report, o.err)
	}
	if v, err := pg.SchemaVersion(ctx, pool); err == nil && v != 1 {
		t.Errorf("schema %d after the failure, want 1", v)
	}
}

// An interrupted CREATE INDEX CONCURRENTLY leaves an invalid index that IF
// NOT EXISTS would skip for good: before the migration runs again, it is
// dropped, and the retry builds a valid one.
func TestARetryDropsTheInvalidIndexAnInterruptedBuildLeft(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := databaseWithT(t)
	// A writer's open transaction: the build waits for it after creating
	// the index's entry, and times out there (the ALTER TABLE beside the
	// build puts this migration under the lock timeout).
	endWriter := hold(t, pool, `INSERT INTO t (v) VALUES (1)`)
	retried := retries(t)
	done := migrate(pool, files("00001_t.sql", tableT, "00002_index.sql", `-- +goose NO TRANSACTION
-- +goose Up
CREATE INDEX CONCURRENTLY IF NOT EXISTS t_v ON t (v);
ALTER TABLE t ADD COLUMN IF NOT EXISTS note text;
`), pg.MigrateOptions{LockTimeout: 300 * time.Millisecond, Backoff: 100 * time.Millisecond, Attempts: 100, Retried: retried.Signal})
	retried.WaitOrTimeout(30*time.Second, "the build to time out")
	var valid *bool
	if err := pool.QueryRow(ctx, `SELECT indisvalid FROM pg_index WHERE indexrelid = to_regclass('t_v')`).Scan(&valid); err != nil && !errors.Is(err, pgx.ErrNoRows) {
		t.Fatal(err)
	}
	if valid == nil || *valid {
		t.Fatalf("after the interrupted build t_v is %v, want an invalid index left behind", valid)
	}
	endWriter()
	if o := wait(t, done); o.err != nil {
		t.Fatalf("migrate: %v", o.err)
	}
	if err := pool.QueryRow(ctx, `SELECT indisvalid FROM pg_index WHERE indexrelid = to_regclass('t_v')`).Scan(&valid); err != nil || valid == nil || !*valid {
		t.Fatalf("t_v after the migration: not valid (%v), want a valid index", err)
	}
}

// A migration of concurrent index builds alone blocks no read or write
// while it waits, so it waits as long as it must: a build slowed by an old
// transaction is not thrown away at the lock timeout.
func TestConcurrentBuildsWaitPastTheLockTimeout(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := databaseWithT(t)
	endWriter := hold(t, pool, `INSERT INTO t (v) VALUES (1)`)
	const lockTimeout = 200 * time.Millisecond
	retried := retries(t)
	done := migrate(pool, files("00001_t.sql", tableT, "00002_index.sql", "-- +goose NO TRANSACTION\n-- +goose Up\nCREATE INDEX CONCURRENTLY IF NOT EXISTS t_v ON t (v);\n"),
		pg.MigrateOptions{LockTimeout: lockTimeout, Backoff: 50 * time.Millisecond, Attempts: 2, Retried: retried.Signal})
	// The build has waited for the writer three lock timeouts long.
	testenv.Eventually(t, 30*time.Second, "the build to wait past three lock timeouts", func() (bool, error) {
		var waiting bool
		err := pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE query LIKE 'CREATE INDEX CONCURRENTLY%'
			AND wait_event_type = 'Lock' AND now() - query_start > $1::interval)`, (3 * lockTimeout).String()).Scan(&waiting)
		return waiting, err
	})
	endWriter()
	o := wait(t, done)
	if o.err != nil || len(o.report.Retries) != 0 {
		t.Fatalf("migrate = %+v, %v: want the build applied on its first attempt", o.report, o.err)
	}
}
