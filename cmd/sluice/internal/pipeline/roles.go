package pipeline

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sluicehq/sluice/cdc"
	"github.com/sluicehq/sluice/internal/listen"
	"github.com/sluicehq/sluice/internal/pg"
	"github.com/sluicehq/sluice/internal/store/lifecycle"
	"github.com/sluicehq/sluice/migrations"
)

// pgCheck is one of Postgres's deployment checks: what a stage needs of
// its role that waiting cannot give (a privilege, the REPLICATION
// attribute, the publication, ownership of what the lifecycle manager
// partitions). Each runs at start, which it refuses with its error's
// words, and then as a readiness check, so one lost while running makes
// the stage not ready with the same words.
type pgCheck struct {
	name   string
	stage  pg.Stage
	ingest bool // ingest's own readiness asks it
	fn     func(ctx context.Context) error
}

// postgresChecks are the checks of the stages this process runs.
func (a *assembly) postgresChecks(life *lifecycle.Manager) []pgCheck {
	privileges := func(pool *pgxpool.Pool, stage pg.Stage) func(context.Context) error {
		return func(ctx context.Context) error { return pg.CheckPrivileges(ctx, pool, stage) }
	}
	var checks []pgCheck
	if a.cfg.Ingest {
		checks = append(checks, pgCheck{"privileges_ingest", pg.StageIngest, true, privileges(a.pool, pg.StageIngest)},
			pgCheck{"partition_owner", "lifecycle", false, life.CheckOwner})
	}
	if a.cfg.CDC {
		publication := a.cfg.CDCConfig.WithDefaults().Publication
		checks = append(checks, pgCheck{"privileges_relay", pg.StageRelay, false, privileges(a.pool, pg.StageRelay)},
			pgCheck{"replication", pg.StageRelay, false, func(ctx context.Context) error { return pg.CheckReplication(ctx, a.pool) }},
			pgCheck{"publication", pg.StageRelay, false, func(ctx context.Context) error { return cdc.CheckPublication(ctx, a.pool, publication) }})
	}
	if a.cfg.Consume {
		checks = append(checks, pgCheck{"privileges_consumers", pg.StageConsumers, false, privileges(a.pool, pg.StageConsumers)})
	}
	if a.cfg.AdminAddr != "" {
		checks = append(checks, pgCheck{"privileges_admin", pg.StageAdmin, false, privileges(a.adminPool, pg.StageAdmin)})
	}
	return checks
}

// deploymentChecks refuses a start the roles cannot carry, before any
// listener binds.
func (a *assembly) deploymentChecks(ctx context.Context) error {
	return a.refuseOrWatch(ctx, a.postgresChecks(a.life))
}

// refuseOrWatch runs every check once, refusing the start with all their
// lines, then registers them for readiness.
func (a *assembly) refuseOrWatch(ctx context.Context, checks []pgCheck) error {
	var errs []error
	for _, c := range checks {
		if err := c.fn(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("postgres refuses what this process needs:\n%w", err)
	}
	for _, c := range checks {
		a.checks = append(a.checks, listen.Check{Name: c.name, Fn: c.fn, Ingest: c.ingest})
	}
	return nil
}

// migrateOrCheck applies the migrations when the owner's connection is
// the schema's owner; any other role (a runtime role) never tries: every
// process checks the schema is at least its binary's version, refusing to
// start otherwise with the command to run and as whom.
func (a *assembly) migrateOrCheck(ctx context.Context) error {
	if a.cfg.Migrate {
		owns, err := pg.OwnsSchema(ctx, a.ownerPool)
		if err != nil {
			return err
		}
		if owns {
			if err := pg.MigrateAsOwner(ctx, a.ownerPool, migrations.FS, a.cfg.CDCConfig.WithDefaults().Publication, a.log); err != nil {
				return err
			}
		} else {
			a.log.Info("not migrating: this role does not own the schema (SLUICE_OWNER_DATABASE_URL migrates, or `sluice migrate` as the owner)")
		}
	}
	return pg.CheckSchema(ctx, a.pool, migrations.FS)
}

// roleConnection opens the pool of a stage that connects as a role of its
// own (url set): the lifecycle manager as the schema's owner, the admin
// listener as the admin role; without url, the process's pool.
func (a *assembly) roleConnection(ctx context.Context, url string, maxConns int32, what string) (*pgxpool.Pool, error) {
	if url == "" {
		return a.pool, nil
	}
	pool, err := pg.Connect(ctx, url, maxConns)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	a.closers = append(a.closers, pool.Close)
	a.log.Debug("connected as a role of its own", slog.String("for", what))
	return pool, nil
}
