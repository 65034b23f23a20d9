package main

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"os"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
)

//go:embed schema.sql
var schema string

// seedSource is one Stripe source of the bench's, with the customers whose
// workspaces its invoices grant to.
type seedSource struct {
	ID        string   `json:"id"`
	Tenant    string   `json:"tenant"`
	Account   string   `json:"account"`
	Secret    string   `json:"secret"`
	Customers []string `json:"customers"`
}

// migrate makes the comparator's tables and River's in an empty database
// and seeds the sources and their customers' workspaces.
func migrate(ctx context.Context, dbURL, sourcesPath string) error {
	raw, err := os.ReadFile(sourcesPath)
	if err != nil {
		return fmt.Errorf("sources: %w", err)
	}
	var seeds []seedSource
	if err := json.Unmarshal(raw, &seeds); err != nil {
		return fmt.Errorf("sources %s: %w", sourcesPath, err)
	}
	pool, err := pgxpool.New(ctx, dbURL)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer pool.Close()
	if _, err := pool.Exec(ctx, schema); err != nil {
		return fmt.Errorf("schema: %w", err)
	}
	migrator, err := rivermigrate.New(riverpgxv5.New(pool), nil)
	if err != nil {
		return fmt.Errorf("river migrator: %w", err)
	}
	if _, err := migrator.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("river migrations: %w", err)
	}
	for _, s := range seeds {
		if _, err := pool.Exec(ctx, `INSERT INTO sources (id, tenant_id, account, secret) VALUES ($1, $2, $3, $4)`,
			s.ID, s.Tenant, s.Account, s.Secret); err != nil {
			return fmt.Errorf("source %s: %w", s.ID, err)
		}
		if _, err := pool.Exec(ctx, `INSERT INTO workspace_customers (tenant_id, customer_id) SELECT $1, unnest($2::text[])`,
			s.Tenant, s.Customers); err != nil {
			return fmt.Errorf("customers of source %s: %w", s.ID, err)
		}
	}
	return nil
}
