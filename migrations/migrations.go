// Package migrations holds Sluice's versioned SQL schema, embedded in the
// binary and applied by goose (see internal/pg.Migrate).
//
// Files are named NNNNN_what.sql and are never edited once released: a change
// is a new file. Replication objects (publication, slot) are not here: the
// cdc package owns them, because their names are configuration.
package migrations

import "embed"

// FS is the set of migration files.
//
//go:embed *.sql
var FS embed.FS
