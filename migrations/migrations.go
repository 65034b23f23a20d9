// Package migrations holds Sluice's versioned SQL schema, embedded in the
// binary and applied by goose (see internal/pg.Migrate).
//
// Files are named NNNNN_what.sql and are never edited once released: a change
// is a new file. They run as the role that owns the schema, so the outbox's
// default publication (sluice_outbox) is made here (00035): creating one needs
// ownership of its table, which the relay's role lacks. The slot is the cdc
// package's, because its name is configuration and it needs a replication
// connection.
package migrations

import "embed"

// FS is the set of migration files.
//
//go:embed *.sql
var FS embed.FS
