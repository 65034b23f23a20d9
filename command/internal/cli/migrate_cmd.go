package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sluicehq/sluice/internal/pg"
	"github.com/sluicehq/sluice/migrations"
)

// MigrateCmd applies the migrations as the schema's owner and grants the
// stages' roles their privileges (internal/pg's roles.go holds them), on
// the tables of the effect groups the deployment runs too.
type MigrateCmd struct {
	Output
	Grant        []string      `name:"grant" sep:"," placeholder:"STAGE=ROLE" help:"Grant a stage's privileges to a role after migrating, on the tables of the effect groups --effect-groups names too (stages: ingest, relay, consumers, admin; ingest+admin=ROLE gives one role two); repeat or comma-separate."`
	Print        bool          `name:"print" help:"Print the --grant SQL for a DBA instead of connecting (nothing is migrated)."`
	Plan         bool          `name:"plan" help:"List the pending migrations and the locks each statement takes, estimated from its SQL, without migrating."`
	LockTimeout  time.Duration `name:"lock-timeout" env:"SLUICE_MIGRATE_LOCK_TIMEOUT" default:"2s" help:"Most one statement waits for a lock; then the migration gives up and is tried again after a pause (a statement waiting for a lock holds up the reads and writes queued behind it). Migrations that leave reads and writes running while they wait (indexes built CONCURRENTLY) wait as long as they must."`
	LockAttempts int           `name:"lock-attempts" env:"SLUICE_MIGRATE_LOCK_ATTEMPTS" default:"10" help:"Attempts in all of a migration that timed out on a lock, with pauses doubling from 2s to a minute between them."`

	assign pg.Assignment
}

// Validate reads --grant before anything connects (a usage error).
func (c *MigrateCmd) Validate() error {
	if c.LockTimeout <= 0 || c.LockAttempts < 1 {
		return errors.New("--lock-timeout must be a positive duration and --lock-attempts at least 1")
	}
	if len(c.Grant) == 0 && !c.Print {
		return nil
	}
	var err error
	c.assign, err = pg.ParseAssignment(c.Grant)
	return err
}

func (c *MigrateCmd) Run(ctx context.Context, g *Globals, log *slog.Logger) error {
	assign := c.assign
	set, err := g.effects()
	if err != nil {
		return err
	}
	if c.Print {
		_, err := fmt.Println(strings.Join(pg.GrantStatements(assign, set.Tables()), "\n"))
		return err
	}
	pool, err := g.ownerPool(ctx)
	if err != nil {
		return err
	}
	defer pool.Close()
	if c.Plan {
		return c.printPlan(ctx, pool)
	}
	opts := pg.MigrateOptions{LockTimeout: c.LockTimeout, Attempts: c.LockAttempts}
	report, err := pg.MigrateAsOwner(ctx, pool, migrations.FS, pg.Publication, opts, log)
	if err != nil {
		return err
	}
	if own := g.appMigrations(); own != nil {
		opts.Table = pg.AppMigrationsTable
		if _, err := pg.MigrateWith(ctx, pool, own, opts, log.With(slog.String("schema", "app"))); err != nil {
			return err
		}
	}
	if err := c.printReport(report); err != nil {
		return err
	}
	if assign == nil {
		return nil
	}
	if err := pg.Grant(ctx, pool, assign, set.Tables()); err != nil {
		return err
	}
	for stage, role := range assign {
		log.InfoContext(ctx, "granted", slog.String("stage", string(stage)), slog.String("role", role))
	}
	return nil
}

// ownerPool connects as the schema's owner: SLUICE_OWNER_DATABASE_URL, or
// SLUICE_DATABASE_URL when that role owns the schema.
func (g *Globals) ownerPool(ctx context.Context) (*pgxpool.Pool, error) {
	url := cmp.Or(g.OwnerURL, g.DatabaseURL)
	if url == "" {
		return nil, errors.New("SLUICE_OWNER_DATABASE_URL or SLUICE_DATABASE_URL is required: the schema's owner's connection")
	}
	return pg.Connect(ctx, url, 4)
}
