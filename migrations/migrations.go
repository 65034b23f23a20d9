// Package migrations holds Sluice's versioned SQL schema, embedded in the
// binary and applied by goose (see internal/pg.MigrateWith).
//
// Files are named NNNNN_what.sql and are never edited once released: a change
// is a new file. They run as the role that owns the schema, so the outbox's
// default publication (sluice_outbox) is made here (00035): creating one needs
// ownership of its table, which the relay's role lacks. The slot is the cdc
// package's, because its name is configuration and it needs a replication
// connection.
//
// # The rule: expand, then contract one release later
//
// Migrations run before the new binaries, while the previous release's
// processes still run, and a rollback runs those processes again on the new
// schema. So every statement of the previous release must keep working
// against the schema a release migrates to:
//
//   - Expand: add tables, nullable columns or columns with a constant
//     default, indexes (CONCURRENTLY, in a "-- +goose NO TRANSACTION" file),
//     constraints NOT VALID then VALIDATE; write to both the old and the new
//     shape in the new code, read both.
//   - Contract one release later: drop or rename a column, a table or a
//     constraint only once no binary still running (nor the one a rollback
//     would start) uses it. The release that stops using it says so in
//     CHANGELOG.md; the next one drops it.
//
// # Locks and time
//
// The migrator waits at most --lock-timeout (2 s) for each lock and tries a
// migration again later, up to --lock-attempts times, so a busy table
// delays an upgrade instead of stalling ingest; a migration must therefore
// be safe to run again from its first statement (a transaction is rolled
// back whole; a NO TRANSACTION file's statements need IF [NOT] EXISTS, and
// the migrator drops an index an interrupted CREATE INDEX CONCURRENTLY
// left invalid before it tries again). Nothing that reads or rewrites a
// large table runs under a strong lock: no CREATE INDEX without
// CONCURRENTLY, no volatile default on ADD COLUMN, no SET NOT NULL without
// a validated CHECK first. A backfill of existing rows is not a migration:
// it is code that updates them in batches of a few thousand rows, each its
// own short transaction, outside the migration (docs/upgrading.md).
//
// squawk checks every file in make test (migrations_test.go); a released
// file's accepted findings, and a new file's, are listed with their reason
// in .squawk.toml. `sluice migrate --plan` prints the locks each pending
// statement takes.
package migrations

import "embed"

// FS is the set of migration files.
//
//go:embed *.sql
var FS embed.FS
