// Package testenv gives integration tests real services: a PostgreSQL 15
// with wal_level=logical and an Apache Kafka 4.x broker in KRaft mode.
//
// It looks for them in this order:
//  1. SLUICE_DATABASE_URL and SLUICE_KAFKA_BROKERS (what `make up` writes to
//     .run/env; `make test` exports them);
//  2. a reachable Docker engine, where it starts both with testcontainers-go;
//  3. otherwise the test fails, saying how to start them. It never skips:
//     a suite that silently skipped its integration tests would pass while
//     proving nothing.
//
// Each test package gets its own database (migrated, with its own slot) and
// its own topic prefix, so packages run in parallel without seeing each
// other's rows or records.
package testenv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sluicehq/sluice/internal/pg"
	"github.com/sluicehq/sluice/migrations"
)

// Services are the shared servers of one test binary.
type Services struct {
	DatabaseURL string // the server's admin database; tests use NewDatabase
	Brokers     []string
	Origin      string // "environment" or "docker"
}

// The services are found once per test binary: starting containers per test
// would cost minutes.
var (
	once     sync.Once
	services *Services
	findErr  error
)

const howTo = `integration tests need PostgreSQL 15 (wal_level=logical) and Kafka 4.x.
Run them with 'make test' (it starts both as local processes), or start them with
'make up' and export the variables in .run/env (set -a; . .run/env; set +a),
or run where a Docker engine is reachable so testcontainers can start them`

// Require returns the shared services or fails the test.
func Require(tb testing.TB) *Services {
	tb.Helper()
	s, err := Find()
	if err != nil {
		tb.Fatalf("%v\n%s", err, howTo)
	}
	return s
}

// EmptyDatabase is a fresh database of the test's own with no schema
// (tests of migrations apply their own), its URL and a small pool on it;
// both go when the test ends.
func EmptyDatabase(tb testing.TB, prefix string) (string, *pgxpool.Pool) {
	tb.Helper()
	ctx := context.Background()
	db, err := Require(tb).NewEmptyDatabase(ctx, prefix)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(db.Drop)
	pool, err := pg.Connect(ctx, db.URL, 8)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(pool.Close)
	return db.URL, pool
}

// Find locates (or starts) the services; for TestMain, which has no tb.
func Find() (*Services, error) {
	once.Do(func() {
		dbURL, brokers := os.Getenv("SLUICE_DATABASE_URL"), os.Getenv("SLUICE_KAFKA_BROKERS")
		if dbURL != "" && brokers != "" {
			services = &Services{DatabaseURL: dbURL, Brokers: strings.Split(brokers, ","), Origin: "environment"}
			return
		}
		services, findErr = startDocker(context.Background())
		if findErr != nil {
			findErr = fmt.Errorf("no test services: SLUICE_DATABASE_URL/SLUICE_KAFKA_BROKERS unset and Docker unusable (%w)", findErr)
		}
	})
	return services, findErr
}

// RandomSuffix is a short random name part for databases, topics and ids.
func RandomSuffix() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Database is a migrated database of its own.
type Database struct {
	URL  string
	Name string
	drop func()
}

// Drop removes the database and any replication slot on it.
func (d *Database) Drop() { d.drop() }

// RunWithDatabase is a package's TestMain for tests sharing one database
// of their own: it finds the services, makes the database (prefix names
// it), sets *url, runs the tests and drops it. A missing service fails the
// package loudly.
func RunWithDatabase(m *testing.M, prefix string, url *string) int {
	services, err := Find()
	if err != nil {
		fmt.Fprintln(os.Stderr, prefix+" tests:", err)
		return 1
	}
	db, err := services.NewDatabase(context.Background(), prefix)
	if err != nil {
		fmt.Fprintln(os.Stderr, prefix+" tests:", err)
		return 1
	}
	defer db.Drop()
	*url = db.URL
	return m.Run()
}

// Pool is a migrated database of the test's own, named after prefix, and
// a pool on it; both go when the test ends.
func Pool(tb testing.TB, prefix string) *pgxpool.Pool {
	tb.Helper()
	db, err := Require(tb).NewDatabase(context.Background(), prefix)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(db.Drop)
	pool, err := pg.Connect(context.Background(), db.URL, 4)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(pool.Close)
	return pool
}

// NewDatabase creates and migrates a fresh database named after prefix.
func (s *Services) NewDatabase(ctx context.Context, prefix string) (*Database, error) {
	db, err := s.NewEmptyDatabase(ctx, prefix)
	if err != nil {
		return nil, err
	}
	pool, err := pg.Connect(ctx, db.URL, 4)
	if err != nil {
		db.drop()
		return nil, err
	}
	defer pool.Close()
	if err := pg.Migrate(ctx, pool, migrations.FS, slog.New(slog.DiscardHandler)); err != nil {
		db.drop()
		return nil, err
	}
	return db, nil
}

// NewEmptyDatabase creates a fresh database named after prefix, with no
// schema (tests of migrations apply their own).
func (s *Services) NewEmptyDatabase(ctx context.Context, prefix string) (*Database, error) {
	admin, err := pgx.Connect(ctx, s.DatabaseURL)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", redact(s.DatabaseURL), err)
	}
	defer admin.Close(ctx)
	var walLevel string
	if err := admin.QueryRow(ctx, "SHOW wal_level").Scan(&walLevel); err != nil {
		return nil, err
	}
	if walLevel != "logical" {
		return nil, fmt.Errorf("postgres runs with wal_level=%s; the relay needs logical", walLevel)
	}
	name := "sluice_test_" + prefix + "_" + RandomSuffix()
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return nil, fmt.Errorf("create database %s: %w", name, err)
	}
	u, err := url.Parse(s.DatabaseURL)
	if err != nil {
		return nil, err
	}
	u.Path = "/" + name
	db := &Database{URL: u.String(), Name: name}
	db.drop = func() { dropDatabase(s.DatabaseURL, name) }
	return db, nil
}

func dropDatabase(adminURL, name string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	admin, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return
	}
	defer admin.Close(ctx)
	// Slots pin WAL for the whole server: a test database must not leave one.
	// A walsender outlives its termination for a moment, and its slot cannot
	// be dropped while it holds it: wait for it to let go.
	_, _ = admin.Exec(ctx, `SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE database = $1 AND active_pid IS NOT NULL`, name)
	for ctx.Err() == nil {
		var busy bool
		if err := admin.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_replication_slots WHERE database = $1 AND active)`, name).Scan(&busy); err != nil || !busy {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	_, _ = admin.Exec(ctx, `SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE database = $1`, name)
	_, _ = admin.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
}

func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparseable url)"
	}
	return u.Redacted()
}

// Eventually polls cond until it holds or the deadline passes: tests wait
// for the pipeline this way, never by sleeping a guessed time.
func Eventually(tb testing.TB, timeout time.Duration, what string, cond func() (bool, error)) {
	tb.Helper()
	deadline := time.Now().Add(timeout)
	var lastErr error
	for {
		ok, err := cond()
		if ok && err == nil {
			return
		}
		lastErr = err
		if time.Now().After(deadline) {
			tb.Fatalf("timed out after %s waiting for %s (last error: %v)", timeout, what, lastErr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
