package cli

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime/debug"
	"time"

	"github.com/sluicehq/sluice/internal/pg"
	"github.com/sluicehq/sluice/migrations"
)

// Version is the Sluice release this command line is, in Semantic
// Versioning: 0.MINOR.PATCH while the Go API and the command line are not
// yet promised stable, MINOR for each release (which may migrate the
// schema), PATCH for fixes that do not. Between releases it is the next
// release with "-dev". CHANGELOG.md has a section for each, saying what an
// operator must do; TestTheVersionIsTheChangelogsNewest keeps the two
// together. The schema has its own number, the newest migration's, which
// `sluice version` prints beside this one.
const Version = "0.2.0-dev"

// VersionCmd prints the binary's version, its commit and the schema it
// needs, and the schema the database is at when it can be reached.
type VersionCmd struct {
	Output
}

// versionReport is what `sluice version` prints.
type versionReport struct {
	Version        string `json:"version"`
	Commit         string `json:"commit"`
	Schema         int64  `json:"schema"`
	DatabaseSchema *int64 `json:"database_schema"`
	DatabaseError  string `json:"database_error,omitempty"`
}

func (c *VersionCmd) Run(ctx context.Context, g *Globals, log *slog.Logger) error {
	schema, err := pg.LatestVersion(migrations.FS)
	if err != nil {
		return err
	}
	r := versionReport{Version: Version, Commit: commit(), Schema: schema}
	if db, err := g.databaseSchema(ctx); err != nil {
		r.DatabaseError = humane(err, log)
	} else {
		r.DatabaseSchema = &db
	}
	if c.Output.Output == "json" {
		return json.NewEncoder(os.Stdout).Encode(r)
	}
	fmt.Printf("version   %s\ncommit    %s\nschema    %d (the newest migration this binary carries)\n", r.Version, r.Commit, r.Schema)
	switch {
	case r.DatabaseSchema == nil:
		fmt.Printf("database  not read: %s\n", r.DatabaseError)
	case *r.DatabaseSchema < schema:
		fmt.Printf("database  %d: behind this binary (sluice migrate --plan lists what is pending)\n", *r.DatabaseSchema)
	case *r.DatabaseSchema > schema:
		fmt.Printf("database  %d: ahead of this binary (a newer release migrated it; see CHANGELOG.md on rolling back)\n", *r.DatabaseSchema)
	default:
		fmt.Printf("database  %d\n", *r.DatabaseSchema)
	}
	return nil
}

// databaseSchema reads the schema version of the database the binary is
// configured for, within a few seconds: `sluice version` answers whether
// or not the database does.
func (g *Globals) databaseSchema(ctx context.Context) (int64, error) {
	url := cmp.Or(g.DatabaseURL, g.OwnerURL)
	if url == "" {
		return 0, errors.New("no SLUICE_DATABASE_URL")
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	pool, err := pg.Connect(ctx, url, 1)
	if err != nil {
		return 0, err
	}
	defer pool.Close()
	return pg.SchemaVersion(ctx, pool)
}

// commit is the VCS revision the binary was built from (commitOf).
func commit() string { return commitOf(debug.ReadBuildInfo()) }

// commitOf is the VCS revision a build recorded, "-dirty" when the work
// tree had changes, "unknown" when it recorded none (built outside a git
// clone, from an archive, or with -buildvcs=false).
func commitOf(info *debug.BuildInfo, ok bool) string {
	if !ok {
		return "unknown"
	}
	var rev string
	var dirty bool
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "unknown"
	}
	if dirty {
		rev += "-dirty"
	}
	return rev
}
