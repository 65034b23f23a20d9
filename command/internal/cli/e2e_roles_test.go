package cli

// The suite's pipeline as a deployment with least privilege runs it: with
// SLUICE_E2E_ROLES=1 (`make test` sets it for the flows the Makefile's
// E2E_ROLES_FLOWS names) the suite's Postgres is one of the test
// binary's own with ssl=on and TLS-only pg_hba (testenv.StartTLSPostgres),
// its schema is owned and migrated by a non-superuser owner, and the
// pipeline is three processes, ingest, the relay and the consumers, each
// connected as its own role granted exactly its stage's privileges
// (pg.Grant), over verify-full TLS, the relay's replication connection
// included; every admin listener, the CLI and the tests' own sluice
// consume processes connect as the admin and consumers roles. Kafka is the
// suite's own (SASL_SSL, a user allowed only its prefix). A missing grant
// is then a 42501 in a flow, not a guess.

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sluicehq/sluice/command/internal/effects/builtintest"
	"github.com/sluicehq/sluice/command/internal/pipeline"
	"github.com/sluicehq/sluice/internal/pg"
	"github.com/sluicehq/sluice/internal/testenv"
)

// rolesSuite is the suite's deployment in roles mode.
type rolesSuite struct {
	pg             *testenv.TLSPostgres
	db             *testenv.RoleDatabase
	relay, consume *pipeline.Process
	admin          *pgxpool.Pool
}

// suiteDatabase is the suite's database and how it goes.
type suiteDatabase struct {
	URL  string
	drop func()
}

func (d *suiteDatabase) Drop() { d.drop() }

// newSuiteDatabase is a database of the shared Postgres, or in roles mode
// one of a Postgres of the suite's own (whose URL, the superuser's over
// TLS, serves the tests' own setup and assertions).
func newSuiteDatabase(ctx context.Context, services *testenv.Services) (*suiteDatabase, error) {
	if os.Getenv("SLUICE_E2E_ROLES") != "1" {
		db, err := services.NewDatabase(ctx, "e2e")
		if err != nil {
			return nil, err
		}
		return &suiteDatabase{URL: db.URL, drop: db.Drop}, nil
	}
	p, err := testenv.StartTLSPostgres(testenv.TLSOptions{})
	if err != nil {
		return nil, err
	}
	db, err := p.NewRoleDatabase("e2e", builtintest.Tables())
	if err != nil {
		p.Stop()
		return nil, err
	}
	suite.roles = &rolesSuite{pg: p, db: db}
	return &suiteDatabase{URL: db.SuperURL, drop: func() {
		if suite.roles.admin != nil {
			suite.roles.admin.Close()
		}
		p.Stop()
	}}, nil
}

// startSuite starts the suite's pipeline: one process, or in roles mode
// the ingest process (returned: its listener is the suite's) beside a
// relay and a consumer process.
func startSuite(ctx context.Context, cfg pipeline.Config, log *slog.Logger) (*pipeline.Process, error) {
	r := suite.roles
	if r == nil {
		return pipeline.Start(ctx, cfg, log)
	}
	as := func(stage pg.Stage, ingest, cdc, consume bool) pipeline.Config {
		c := cfg
		c.DatabaseURL, c.AdminDatabaseURL = r.db.URLs[stage], r.db.URLs[pg.StageAdmin]
		c.Ingest, c.CDC, c.Consume = ingest, cdc, consume
		if ingest {
			c.OwnerDatabaseURL = r.db.OwnerURL // the lifecycle manager's
		}
		return c
	}
	var err error
	if r.admin, err = pg.Connect(ctx, r.db.URLs[pg.StageAdmin], 4); err != nil {
		return nil, err
	}
	if r.relay, err = pipeline.Start(ctx, as(pg.StageRelay, false, true, false), log); err != nil {
		return nil, err
	}
	if r.consume, err = pipeline.Start(ctx, as(pg.StageConsumers, false, false, true), log); err != nil {
		return nil, err
	}
	return pipeline.Start(ctx, as(pg.StageIngest, true, false, false), log)
}

// wait waits for the relay and consumer processes (nil outside roles mode).
func (r *rolesSuite) wait() error {
	if r == nil {
		return nil
	}
	return errors.Join(r.relay.Wait(), r.consume.Wait())
}

// cliDatabaseURL is the connection the CLI and the tests' processes get:
// the admin role's in roles mode (an operator's tool), else the suite's.
func cliDatabaseURL() string {
	if suite.roles != nil {
		return suite.roles.db.URLs[pg.StageAdmin]
	}
	return suite.pool.Config().ConnString()
}

// consumeRoleEnv is what a test's own `sluice consume` adds to its
// environment in roles mode: the consumers' role, and the admin role for
// its admin listener.
func consumeRoleEnv() []string {
	if suite.roles == nil {
		return nil
	}
	return []string{"SLUICE_DATABASE_URL=" + suite.roles.db.URLs[pg.StageConsumers],
		"SLUICE_ADMIN_DATABASE_URL=" + suite.roles.db.URLs[pg.StageAdmin]}
}

// adminPool is what the tests' operator reads and replays through: the
// admin role's pool in roles mode.
func adminPool(t *testing.T) *pgxpool.Pool {
	t.Helper()
	if suite.roles != nil {
		return suite.roles.admin
	}
	return suite.pool
}
