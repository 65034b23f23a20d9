package pipeline

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sluicehq/sluice/internal/cdc"
	"github.com/sluicehq/sluice/internal/listen"
	"github.com/sluicehq/sluice/internal/pg"
	"github.com/sluicehq/sluice/migrations"
)

// postgresChecks are what the stages this process runs need of their
// roles and waiting cannot give: each stage's privileges (on the running
// effect groups' tables too), the relay's
// REPLICATION attribute and publication, the lifecycle manager's
// ownership of what it partitions. Each refuses the start with its line
// and then watches readiness, so one lost while running makes the stage
// not ready with the same words (and is logged at ERROR by the doctor's
// watch).
func (a *assembly) postgresChecks() []listen.Check {
	privileges := func(pool *pgxpool.Pool, stage pg.Stage) func(context.Context) error {
		return func(ctx context.Context) error { return pg.CheckPrivileges(ctx, pool, stage, a.cfg.Effects.Tables()) }
	}
	checks := []listen.Check{{Name: "schema", Stage: "owner", Refuse: true, Fn: func(ctx context.Context) error {
		return pg.CheckSchema(ctx, a.pool, migrations.FS)
	}}}
	if a.cfg.OwnerDatabaseURL != "" {
		publication := a.cfg.CDCConfig.WithDefaults().Publication
		checks = append(checks, listen.Check{Name: "owner", Stage: "owner", Refuse: true, Fn: func(ctx context.Context) error {
			return pg.CheckOwner(ctx, a.ownerPool, publication)
		}})
	}
	if a.cfg.Ingest {
		checks = append(checks,
			listen.Check{Name: "privileges_ingest", Stage: "ingest", Refuse: true, Ingest: true, Fn: privileges(a.pool, pg.StageIngest)},
			listen.Check{Name: "partition_owner", Stage: "lifecycle", Refuse: true, Fn: a.life.CheckOwner})
	}
	if a.cfg.CDC {
		publication := a.cfg.CDCConfig.WithDefaults().Publication
		checks = append(checks,
			listen.Check{Name: "privileges_relay", Stage: "relay", Refuse: true, Fn: privileges(a.pool, pg.StageRelay)},
			listen.Check{Name: "replication", Stage: "relay", Refuse: true, Fn: func(ctx context.Context) error { return pg.CheckReplication(ctx, a.pool) }},
			listen.Check{Name: "publication", Stage: "relay", Refuse: true, Fn: func(ctx context.Context) error { return cdc.CheckPublication(ctx, a.pool, publication) }})
	}
	if a.cfg.Consume {
		checks = append(checks, listen.Check{Name: "privileges_consumers", Stage: "consumers", Refuse: true, Fn: privileges(a.pool, pg.StageConsumers)})
	}
	if a.cfg.AdminAddr != "" {
		checks = append(checks, listen.Check{Name: "privileges_admin", Stage: "admin", Refuse: true, Fn: privileges(a.adminPool, pg.StageAdmin)})
	}
	return checks
}

// migrateOrCheck applies the migrations when the owner's connection is
// the schema's owner; any other role (a runtime role) never tries: every
// process checks the schema is at least its binary's version, refusing to
// start otherwise with the command to run and as whom.
func (a *assembly) migrateOrCheck(ctx context.Context) error {
	if a.cfg.Migrate {
		if err := pg.MigrateIfOwner(ctx, a.ownerPool, migrations.FS, a.cfg.CDCConfig.WithDefaults().Publication, a.log); err != nil {
			return err
		}
		if err := a.migrateApp(ctx); err != nil {
			return err
		}
	}
	return pg.CheckSchema(ctx, a.pool, migrations.FS)
}

// migrateApp applies the binary's own migrations when the owner's
// connection owns the schema.
func (a *assembly) migrateApp(ctx context.Context) error {
	if a.cfg.AppMigrations == nil {
		return nil
	}
	owns, err := pg.OwnsSchema(ctx, a.ownerPool)
	if err != nil || !owns {
		return err
	}
	return pg.MigrateApp(ctx, a.ownerPool, a.cfg.AppMigrations, a.log)
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
