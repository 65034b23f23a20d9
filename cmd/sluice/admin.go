package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sluicehq/sluice/internal/keyring"
	"github.com/sluicehq/sluice/internal/pg"
	"github.com/sluicehq/sluice/internal/tenancy"
	"github.com/sluicehq/sluice/migrations"
)

// MigrateCmd applies migrations.
type MigrateCmd struct{}

func (c *MigrateCmd) Run(ctx context.Context, g *Globals, log *slog.Logger) error {
	pool, err := g.pool(ctx)
	if err != nil {
		return err
	}
	defer pool.Close()
	return pg.Migrate(ctx, pool, migrations.FS, log)
}

func (g *Globals) pool(ctx context.Context) (*pgxpool.Pool, error) {
	if g.DatabaseURL == "" {
		return nil, errors.New("SLUICE_DATABASE_URL is required")
	}
	return pg.Connect(ctx, g.DatabaseURL, 4)
}

func (g *Globals) store(ctx context.Context, needRing bool) (tenancy.Store, func(), error) {
	pool, err := g.pool(ctx)
	if err != nil {
		return tenancy.Store{}, nil, err
	}
	s := tenancy.Store{Pool: pool}
	if needRing {
		if s.Ring, err = keyring.Parse(g.SecretKey); err != nil {
			pool.Close()
			return tenancy.Store{}, nil, err
		}
	}
	return s, pool.Close, nil
}

// Output chooses how administration commands print: the new id alone on the
// first line (details after it), or one JSON object.
type Output struct {
	Output string `name:"output" short:"o" enum:"text,json" default:"text" help:"Output format: text or json."`
}

func (o Output) print(id string, fields map[string]any, details ...string) error {
	if o.Output == "json" {
		fields["id"] = id
		return json.NewEncoder(os.Stdout).Encode(fields)
	}
	_, err := fmt.Println(strings.Join(append([]string{id}, details...), "\n"))
	return err
}

// TenantCmd groups tenant administration.
type TenantCmd struct {
	Create TenantCreateCmd `cmd:"" help:"Create a tenant; prints its id."`
}

// TenantCreateCmd creates a tenant.
type TenantCreateCmd struct {
	Output
	Name string `required:"" help:"Tenant name."`
}

func (c *TenantCreateCmd) Run(ctx context.Context, g *Globals) error {
	s, done, err := g.store(ctx, false)
	if err != nil {
		return err
	}
	defer done()
	id, err := s.CreateTenant(ctx, c.Name)
	if err != nil {
		return err
	}
	return c.print(id, map[string]any{"name": c.Name})
}

// WorkspaceCmd groups workspace administration.
type WorkspaceCmd struct {
	Create  WorkspaceCreateCmd  `cmd:"" help:"Create a workspace mapped from a provider customer; prints its id."`
	Balance WorkspaceBalanceCmd `cmd:"" help:"Print a workspace's credit balance."`
}

// WorkspaceCreateCmd creates a workspace.
type WorkspaceCreateCmd struct {
	Output
	Tenant   string `required:"" help:"Tenant id."`
	Customer string `required:"" help:"Provider customer id (e.g. cus_...) that maps to this workspace."`
	Name     string `help:"Workspace name."`
}

func (c *WorkspaceCreateCmd) Run(ctx context.Context, g *Globals) error {
	s, done, err := g.store(ctx, false)
	if err != nil {
		return err
	}
	defer done()
	id, err := s.CreateWorkspace(ctx, c.Tenant, c.Customer, c.Name)
	if err != nil {
		return err
	}
	return c.print(id, map[string]any{"tenant_id": c.Tenant, "customer": c.Customer, "name": c.Name})
}

// WorkspaceBalanceCmd prints a balance.
type WorkspaceBalanceCmd struct {
	Output
	ID string `arg:"" help:"Workspace id."`
}

func (c *WorkspaceBalanceCmd) Run(ctx context.Context, g *Globals) error {
	s, done, err := g.store(ctx, false)
	if err != nil {
		return err
	}
	defer done()
	credits, err := s.Balance(ctx, c.ID)
	if err != nil {
		return err
	}
	if c.Output.Output == "json" {
		return json.NewEncoder(os.Stdout).Encode(map[string]any{"workspace_id": c.ID, "credits": credits})
	}
	_, err = fmt.Println(credits)
	return err
}
