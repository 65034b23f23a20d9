package pg

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"strconv"
	"strings"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Migrate applies every pending migration of migrations (goose's files,
// NNNNN_what.sql at its root; Sluice's are migrations.FS) with the default
// MigrateOptions (MigrateWith).
func Migrate(ctx context.Context, pool *pgxpool.Pool, migrations fs.FS, log *slog.Logger) error {
	_, err := MigrateWith(ctx, pool, migrations, MigrateOptions{}, log)
	return err
}

// AppMigrationsTable records a binary's own migrations (command.Migrations),
// apart from Sluice's: each schema has its own versions.
const AppMigrationsTable = "sluice_app_schema_migrations"

// MigrateApp applies a binary's own migrations, after Sluice's, recording
// them in AppMigrationsTable, with the default MigrateOptions.
func MigrateApp(ctx context.Context, pool *pgxpool.Pool, migrations fs.FS, log *slog.Logger) error {
	_, err := MigrateWith(ctx, pool, migrations, MigrateOptions{Table: AppMigrationsTable}, log.With(slog.String("schema", "app")))
	return err
}

// OwnsSchema reports whether the connection's role may migrate: it owns
// the migrations' record (or is a member of its owner), or the database
// has none yet and the role may create tables. A runtime role, granted
// only its stage's privileges, never does: it checks the version instead
// (CheckSchema).
func OwnsSchema(ctx context.Context, q Querier) (bool, error) {
	var owns bool
	err := q.QueryRow(ctx, `SELECT CASE WHEN to_regclass($1) IS NULL THEN has_schema_privilege('public', 'CREATE')
		ELSE pg_has_role(current_user, (SELECT relowner FROM pg_class WHERE oid = to_regclass($1)), 'USAGE') END`, migrationsTable).Scan(&owns)
	if err != nil {
		return false, fmt.Errorf("check who owns the schema: %w", err)
	}
	return owns, nil
}

// ErrSchemaBehind: the database's schema is older than the binary's
// migrations.
var ErrSchemaBehind = errors.New("schema older than this binary")

// ErrNoSchema: the database has no Sluice schema (no record of
// migrations).
var ErrNoSchema = errors.New("no Sluice schema")

// SchemaVersion is the newest migration the database has applied
// (ErrNoSchema when it has none).
func SchemaVersion(ctx context.Context, q Querier) (int64, error) {
	var have *int64
	err := q.QueryRow(ctx, `SELECT max(version_id) FROM `+migrationsTable+` WHERE is_applied`).Scan(&have)
	var pgErr *pgconn.PgError
	switch {
	case errors.As(err, &pgErr) && pgErr.Code == pgerrcode.UndefinedTable:
		return 0, fmt.Errorf("no %s: %w", migrationsTable, ErrNoSchema)
	case err != nil:
		return 0, fmt.Errorf("read the schema's version: %w", err)
	case have == nil:
		return 0, fmt.Errorf("%s is empty: %w", migrationsTable, ErrNoSchema)
	}
	return *have, nil
}

// AppliedVersions is the set of migrations the database has applied (none,
// and ErrNoSchema, when it has no record of them). It only reads.
func AppliedVersions(ctx context.Context, q Querier) (map[int64]bool, error) {
	rows, err := q.Query(ctx, `SELECT version_id FROM `+migrationsTable+` WHERE is_applied`)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == pgerrcode.UndefinedTable {
		return map[int64]bool{}, fmt.Errorf("no %s: %w", migrationsTable, ErrNoSchema)
	}
	if err != nil {
		return nil, fmt.Errorf("read the applied migrations: %w", err)
	}
	versions, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return nil, fmt.Errorf("read the applied migrations: %w", err)
	}
	applied := map[int64]bool{}
	for _, v := range versions {
		applied[v] = true
	}
	return applied, nil
}

// CheckSchema refuses a schema older than migrations (a binary started
// before its migrations ran): its statements would fail on tables or
// columns that are not there yet. A newer schema is fine: a release's
// migrations only add what the release before does not use (the expand
// rule, migrations/migrations.go), so binaries roll out after them and
// roll back onto them.
func CheckSchema(ctx context.Context, q Querier, migrations fs.FS) error {
	want, err := LatestVersion(migrations)
	if err != nil {
		return err
	}
	have, err := SchemaVersion(ctx, q)
	switch {
	case errors.Is(err, ErrNoSchema):
		return fmt.Errorf("the database has no Sluice schema (no %s): run `sluice migrate` as the role that is to own the schema: %w", migrationsTable, ErrSchemaBehind)
	case err != nil:
		return err
	case have < want:
		return fmt.Errorf("the schema is at version %d and this binary needs %d: run `sluice migrate` as the schema's owner (SLUICE_OWNER_DATABASE_URL, or --database-url of the owning role) before starting it: %w",
			have, want, ErrSchemaBehind)
	}
	return nil
}

// LatestVersion is the highest version among migrations' files
// (NNNNN_what.sql at its root): the schema a binary carrying them needs.
func LatestVersion(migrations fs.FS) (int64, error) {
	names, err := fs.Glob(migrations, "*.sql")
	if err != nil {
		return 0, fmt.Errorf("list migrations: %w", err)
	}
	var latest int64
	for _, name := range names {
		prefix, _, _ := strings.Cut(name, "_")
		v, err := strconv.ParseInt(prefix, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("migration %s: its name does not start with a version", name)
		}
		latest = max(latest, v)
	}
	return latest, nil
}

// Grant gives each role of a its stages' privileges, effects' tables
// included (GrantStatements), in one transaction, as the connection's
// role: the schema's owner, which may grant what it owns. The REPLICATION attribute is set only where the
// role lacks it; a refusal there (only a superuser may set it on Postgres
// 15) says what to run instead, after the grants were made.
func Grant(ctx context.Context, pool *pgxpool.Pool, a Assignment, effects EffectTables) error {
	for _, role := range a {
		var exists bool
		if err := pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = $1)`, role).Scan(&exists); err != nil {
			return fmt.Errorf("look up role %s: %w", role, err)
		}
		if !exists {
			return fmt.Errorf("role %s does not exist: create it first (CREATE ROLE %s LOGIN PASSWORD '...'), then grant", role, pgx.Identifier{role}.Sanitize())
		}
	}
	stmts := GrantStatements(a, effects)
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		for _, s := range stmts {
			if strings.HasPrefix(s, "--") || strings.HasPrefix(s, "ALTER ROLE") {
				continue
			}
			if _, err := tx.Exec(ctx, s); err != nil {
				// The server's words are the message here: a person runs
				// this and must read which grant failed and why.
				var pgErr *pgconn.PgError
				if errors.As(err, &pgErr) {
					return fmt.Errorf("%s refused: %s (run it as the schema's owner)", s, pgErr.Message)
				}
				return fmt.Errorf("%s: %w", s, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("grant: %w", err)
	}
	if role, ok := a[StageRelay]; ok {
		return grantReplication(ctx, pool, role)
	}
	return nil
}

func grantReplication(ctx context.Context, pool *pgxpool.Pool, role string) error {
	var has bool
	if err := pool.QueryRow(ctx, `SELECT rolreplication OR rolsuper FROM pg_roles WHERE rolname = $1`, role).Scan(&has); err != nil {
		return fmt.Errorf("look up role %s: %w", role, err)
	}
	if has {
		return nil
	}
	r := pgx.Identifier{role}.Sanitize()
	if _, err := pool.Exec(ctx, "ALTER ROLE "+r+" WITH REPLICATION"); err != nil {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == pgerrcode.InsufficientPrivilege {
			return fmt.Errorf("granted the tables, but role %s lacks the REPLICATION attribute (stage relay) and this role may not give it: as a superuser ALTER ROLE %s WITH REPLICATION (RDS and Aurora: GRANT rds_replication TO %s)", role, r, r)
		}
		return fmt.Errorf("give %s the REPLICATION attribute: %w", role, err)
	}
	return nil
}

// MigrateAsOwner is Migrate after checking, on a schema migrated before,
// that the role owns what migrations change (CheckOwner): a role that does
// not is refused in words before goose fails on "must be owner".
func MigrateAsOwner(ctx context.Context, pool *pgxpool.Pool, migrations fs.FS, publication string, opts MigrateOptions, log *slog.Logger) (MigrateReport, error) {
	var migrated bool
	if err := pool.QueryRow(ctx, `SELECT to_regclass('outbox') IS NOT NULL`).Scan(&migrated); err != nil {
		return MigrateReport{}, fmt.Errorf("look up the schema: %w", err)
	}
	if migrated {
		if err := CheckOwner(ctx, pool, publication); err != nil {
			return MigrateReport{}, err
		}
	}
	return MigrateWith(ctx, pool, migrations, opts, log)
}

// MigrateIfOwner migrates as MigrateAsOwner when pool's role owns the
// schema, and otherwise only checks it (CheckSchema): a runtime role never
// tries to migrate, and refuses a schema older than its binary.
func MigrateIfOwner(ctx context.Context, pool *pgxpool.Pool, migrations fs.FS, publication string, log *slog.Logger) error {
	owns, err := OwnsSchema(ctx, pool)
	if err != nil {
		return err
	}
	if !owns {
		log.InfoContext(ctx, "not migrating: this role does not own the schema (SLUICE_OWNER_DATABASE_URL migrates, or `sluice migrate` as the owner)")
		return CheckSchema(ctx, pool, migrations)
	}
	_, err = MigrateAsOwner(ctx, pool, migrations, publication, MigrateOptions{}, log)
	return err
}
