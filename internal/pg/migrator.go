package pg

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"

	"github.com/sluicehq/sluice/internal/pg/lockplan"
)

// MigrateOptions bound how long migrating may make the running pipeline
// wait. A statement waiting for a lock holds its place in the table's
// queue, and every later request that conflicts with it waits behind it:
// an ALTER TABLE on inbox waiting for a long report stops ingest's inserts
// as surely as one that runs. So each statement waits at most LockTimeout,
// and a migration that timed out is tried again later, from its start.
type MigrateOptions struct {
	// LockTimeout is the most one statement waits for a lock (Postgres's
	// lock_timeout, on every connection of the migrator). Default 2s. A
	// migration whose statements leave reads and writes running while they
	// wait (lockplan's LeavesReadsAndWrites: CREATE and DROP INDEX
	// CONCURRENTLY, new tables) runs without it: its waits block no one,
	// and a timeout would throw a long index build away.
	LockTimeout time.Duration
	// Attempts is how many times in all a migration that timed out on a
	// lock (or was chosen as a deadlock's victim) is tried. Default 10.
	Attempts int
	// Backoff is the pause after the first timed-out attempt; each next
	// pause doubles, up to a minute, give or take a fifth. Default 2s.
	Backoff time.Duration
	// Table records the applied versions. Default sluice_schema_migrations;
	// another name keeps a separate series (a drill's test migrations).
	Table string
	// Retried, when set, is called after each attempt that timed out,
	// before its pause (tests wait on it).
	Retried func(Retry)
}

func (o MigrateOptions) withDefaults() MigrateOptions {
	o.LockTimeout = cmp.Or(o.LockTimeout, 2*time.Second)
	o.Attempts = cmp.Or(o.Attempts, 10)
	o.Backoff = cmp.Or(o.Backoff, 2*time.Second)
	o.Table = cmp.Or(o.Table, migrationsTable)
	return o
}

// Retry is one attempt of a migration that gave up waiting for a lock.
type Retry struct {
	Version int64
	Attempt int           // 1 for the first
	Waited  time.Duration // from its start to its failure
	Pause   time.Duration // before the next attempt
}

// MigrateReport says what MigrateWith did.
type MigrateReport struct {
	From, To int64   // the schema version before and after
	Applied  []int64 // the versions applied, in order
	Retries  []Retry // the attempts that gave up waiting for a lock
}

// Stalled is the time the attempts that gave up spent: at most that long
// in all, the statements they queued held up the tables they named.
func (r MigrateReport) Stalled() time.Duration {
	var d time.Duration
	for _, rt := range r.Retries {
		d += rt.Waited
	}
	return d
}

// ErrLocksNotGranted: a migration timed out waiting for its locks on every
// attempt.
var ErrLocksNotGranted = errors.New("the migration could not take its locks")

// MigrateWith applies every pending migration of migrations, one at a time,
// in order. Several instances may start at once: goose's session advisory
// lock lets one migrate while the others wait. Before each attempt of a NO
// TRANSACTION migration, the indexes it builds concurrently that an
// interrupted attempt left invalid are dropped: "CREATE INDEX CONCURRENTLY
// IF NOT EXISTS" would otherwise skip them for good.
func MigrateWith(ctx context.Context, pool *pgxpool.Pool, migrations fs.FS, opts MigrateOptions, log *slog.Logger) (MigrateReport, error) {
	opts = opts.withDefaults()
	plans, err := lockplan.ReadFS(migrations)
	if err != nil {
		return MigrateReport{}, err
	}
	m := &migrator{opts: opts, fsys: migrations, log: log, plans: map[int64]lockplan.Migration{}}
	for _, p := range plans {
		m.plans[p.Version] = p
	}
	if m.bounded, m.closeBounded, err = openMigrationDB(ctx, pool, opts.LockTimeout); err != nil {
		return MigrateReport{}, err
	}
	defer m.closeBounded()
	if m.patient, m.closePatient, err = openMigrationDB(ctx, pool, 0); err != nil {
		return MigrateReport{}, err
	}
	defer m.closePatient()
	return m.run(ctx)
}

type migrator struct {
	opts                       MigrateOptions
	fsys                       fs.FS
	log                        *slog.Logger
	plans                      map[int64]lockplan.Migration
	bounded, patient           *sql.DB // with and without the lock timeout
	closeBounded, closePatient func()
	report                     MigrateReport
}

func (m *migrator) run(ctx context.Context) (MigrateReport, error) {
	conn, err := m.patient.Conn(ctx)
	if err != nil {
		return m.report, fmt.Errorf("migration lock: %w", err)
	}
	defer conn.Close()
	locker, err := lock.NewPostgresSessionLocker()
	if err != nil {
		return m.report, fmt.Errorf("migration lock: %w", err)
	}
	if err := locker.SessionLock(ctx, conn); err != nil {
		return m.report, fmt.Errorf("take the migration lock (another instance migrates?): %w", err)
	}
	defer locker.SessionUnlock(context.WithoutCancel(ctx), conn) //nolint:errcheck // the lock ends with the session anyway
	provider, err := m.provider(m.patient)
	if err != nil {
		return m.report, err
	}
	if m.report.From, err = provider.GetDBVersion(ctx); err != nil {
		return m.report, fmt.Errorf("read schema version: %w", err)
	}
	m.report.To = m.report.From
	for {
		next, ok, err := pending(ctx, provider)
		if err != nil || !ok {
			if err == nil {
				m.log.InfoContext(ctx, "schema up to date", slog.Int64("version", m.report.To))
			}
			return m.report, err
		}
		if err := m.apply(ctx, next); err != nil {
			return m.report, err
		}
	}
}

func (m *migrator) provider(db *sql.DB) (*goose.Provider, error) {
	p, err := goose.NewProvider(goose.DialectPostgres, db, m.fsys,
		goose.WithDisableGlobalRegistry(true),
		goose.WithTableName(m.opts.Table),
	)
	if err != nil {
		return nil, fmt.Errorf("load migrations: %w", err)
	}
	return p, nil
}

// pending is the lowest version not applied yet.
func pending(ctx context.Context, p *goose.Provider) (int64, bool, error) {
	statuses, err := p.Status(ctx)
	if err != nil {
		return 0, false, fmt.Errorf("read migration status: %w", err)
	}
	for _, s := range statuses {
		if s.State == goose.StatePending {
			return s.Source.Version, true, nil
		}
	}
	return 0, false, nil
}

// apply applies one migration, trying it again after a lock timeout.
func (m *migrator) apply(ctx context.Context, version int64) error {
	plan := m.plans[version]
	db := m.bounded
	if plan.LeavesReadsAndWrites() {
		db = m.patient
	}
	provider, err := m.provider(db)
	if err != nil {
		return err
	}
	for attempt := 1; ; attempt++ {
		began := time.Now()
		err := m.dropInvalidIndexes(ctx, db, plan)
		var res *goose.MigrationResult
		if err == nil {
			res, err = provider.UpByOne(ctx)
		}
		if err == nil {
			m.log.InfoContext(ctx, "migration applied", slog.Int64("version", version), slog.String("file", plan.File),
				slog.Duration("took", res.Duration), slog.Int("attempt", attempt))
			m.report.Applied = append(m.report.Applied, version)
			m.report.To = version
			return nil
		}
		if !LockNotGranted(err) {
			return fmt.Errorf("apply migration %s: %w", plan.File, err)
		}
		if attempt >= m.opts.Attempts {
			return fmt.Errorf("migration %s waited more than %s for its locks on each of %d attempts (pg_locks and pg_stat_activity show which sessions hold the tables it changes): %w",
				plan.File, m.opts.LockTimeout, attempt, ErrLocksNotGranted)
		}
		r := Retry{Version: version, Attempt: attempt, Waited: time.Since(began), Pause: backoff(m.opts.Backoff, attempt)}
		m.report.Retries = append(m.report.Retries, r)
		m.log.WarnContext(ctx, "migration gave up waiting for a lock; trying again", slog.Int64("version", version), slog.String("file", plan.File),
			slog.Int("attempt", attempt), slog.Duration("waited", r.Waited), slog.Duration("pause", r.Pause), slog.Any("error", err))
		if m.opts.Retried != nil {
			m.opts.Retried(r)
		}
		select {
		case <-time.After(r.Pause):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// backoff is the pause after attempt n: base doubled n-1 times, at most a
// minute, give or take a fifth.
func backoff(base time.Duration, n int) time.Duration {
	d := base
	for i := 1; i < n && d < time.Minute; i++ {
		d *= 2
	}
	d = min(d, time.Minute)
	return time.Duration(float64(d) * (0.8 + 0.4*rand.Float64()))
}

// dropInvalidIndexes drops, before a NO TRANSACTION migration runs, the
// indexes it builds concurrently that exist and are invalid: what an
// attempt interrupted during the build left (a lock timeout, a crash). The
// migration lock is held, so no other migrator is building them now.
func (m *migrator) dropInvalidIndexes(ctx context.Context, db *sql.DB, plan lockplan.Migration) error {
	names := plan.ConcurrentIndexes()
	if plan.Transaction || len(names) == 0 {
		return nil
	}
	rows, err := db.QueryContext(ctx, `SELECT c.oid::regclass::text FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
		WHERE NOT i.indisvalid AND c.relname = ANY($1) AND pg_table_is_visible(c.oid)`, names)
	if err != nil {
		return fmt.Errorf("look for invalid indexes: %w", err)
	}
	var invalid []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			rows.Close()
			return fmt.Errorf("look for invalid indexes: %w", err)
		}
		invalid = append(invalid, name)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("look for invalid indexes: %w", err)
	}
	for _, name := range invalid {
		m.log.WarnContext(ctx, "dropping an invalid index an interrupted build left", slog.String("index", name), slog.String("file", plan.File))
		// name is regclass's text: quoted where it must be.
		if _, err := db.ExecContext(ctx, "DROP INDEX CONCURRENTLY IF EXISTS "+name); err != nil {
			return fmt.Errorf("drop invalid index %s: %w", name, err)
		}
	}
	return nil
}

// openMigrationDB opens a small pool with pool's configuration whose
// connections wait at most lockTimeout for a lock (0: as long as it
// takes), as a database/sql handle for goose.
func openMigrationDB(ctx context.Context, pool *pgxpool.Pool, lockTimeout time.Duration) (*sql.DB, func(), error) {
	cfg := pool.Config()
	cfg.MaxConns = 3
	after := cfg.AfterConnect
	cfg.AfterConnect = func(ctx context.Context, conn *pgx.Conn) error {
		if after != nil {
			if err := after(ctx, conn); err != nil {
				return err
			}
		}
		return set(ctx, conn, map[string]string{"lock_timeout": fmt.Sprintf("%dms", lockTimeout.Milliseconds())})
	}
	p, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("open the migrator's pool: %w", err)
	}
	db := stdlib.OpenDBFromPool(p)
	return db, func() { db.Close(); p.Close() }, nil
}
