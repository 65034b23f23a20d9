package testenv

import (
	"fmt"
	"log/slog"

	"github.com/jackc/pgx/v5"

	"github.com/sluicehq/sluice/internal/pg"
	"github.com/sluicehq/sluice/migrations"
)

// RoleDatabase is a database whose schema a non-superuser owner migrated,
// with one login role per stage granted exactly its stage's privileges
// (pg.Grant, as `sluice migrate --grant` does) and the relay's role given
// REPLICATION by the superuser, as a DBA would.
type RoleDatabase struct {
	Name string
	// SuperURL is the superuser's connection, for a test's own setup and
	// assertions (and for taking a privilege away).
	SuperURL string
	// OwnerURL is the schema's owner's: migrations and the lifecycle
	// manager.
	OwnerURL string
	// Roles and URLs name each stage's role and its connection.
	Roles map[pg.Stage]string
	URLs  map[pg.Stage]string
}

// NewRoleDatabase makes one on p, every connection verify-full TLS, its
// stages granted effects' tables too (those of the effect groups its
// deployment runs).
func (p *TLSPostgres) NewRoleDatabase(prefix string, effects pg.EffectTables) (*RoleDatabase, error) {
	ctx, cancel := adminContext()
	defer cancel()
	sfx := RandomSuffix()
	d := &RoleDatabase{Name: "sluice_" + prefix + "_" + sfx, Roles: map[pg.Stage]string{}, URLs: map[pg.Stage]string{}}
	d.SuperURL = p.URL("postgres", d.Name, "")
	owner := prefix + "_" + sfx + "_owner"
	d.OwnerURL = p.URL(owner, d.Name, "")
	super, err := pgx.Connect(ctx, p.URL("postgres", "postgres", ""))
	if err != nil {
		return nil, err
	}
	defer super.Close(ctx)
	stmts := []string{
		"CREATE ROLE " + pgx.Identifier{owner}.Sanitize() + " LOGIN",
		"CREATE DATABASE " + pgx.Identifier{d.Name}.Sanitize() + " OWNER " + pgx.Identifier{owner}.Sanitize(),
	}
	for _, st := range pg.RuntimeStages {
		role := prefix + "_" + sfx + "_" + string(st)
		d.Roles[st], d.URLs[st] = role, p.URL(role, d.Name, "")
		stmts = append(stmts, "CREATE ROLE "+pgx.Identifier{role}.Sanitize()+" LOGIN")
	}
	stmts = append(stmts, "ALTER ROLE "+pgx.Identifier{d.Roles[pg.StageRelay]}.Sanitize()+" WITH REPLICATION")
	for _, s := range stmts {
		if _, err := super.Exec(ctx, s); err != nil {
			return nil, fmt.Errorf("%s: %w", s, err)
		}
	}
	pool, err := pg.Connect(ctx, d.OwnerURL, 2)
	if err != nil {
		return nil, err
	}
	defer pool.Close()
	if err := pg.Migrate(ctx, pool, migrations.FS, slog.New(slog.DiscardHandler)); err != nil {
		return nil, err
	}
	if err := pg.Grant(ctx, pool, pg.Assignment(d.Roles), effects); err != nil {
		return nil, err
	}
	return d, nil
}
