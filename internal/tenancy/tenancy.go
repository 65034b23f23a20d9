// Package tenancy administers tenants, their sources and their workspaces:
// what the `sluice tenant|source|workspace` commands and the demo set up.
// Source secrets are encrypted here, before they reach the database.
package tenancy

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sluicehq/sluice/internal/keyring"
)

// Kinds are the supported source kinds.
var Kinds = []string{"stripe", "github", "standard_webhooks", "hmac"}

// Store writes tenancy records.
type Store struct {
	Pool *pgxpool.Pool
	Ring *keyring.Ring
}

// CreateTenant returns the new tenant's id.
func (s Store) CreateTenant(ctx context.Context, name string) (string, error) {
	if name == "" {
		return "", errors.New("tenant name is required")
	}
	var id string
	if err := s.Pool.QueryRow(ctx, `INSERT INTO tenants (name) VALUES ($1) RETURNING id::text`, name).Scan(&id); err != nil {
		return "", fmt.Errorf("create tenant: %w", err)
	}
	return id, nil
}

// NewSource describes a source to create.
type NewSource struct {
	TenantID string
	Kind     string
	Account  string
	Secret   string
}

// CreateSource creates a source with its first secret and returns its id.
func (s Store) CreateSource(ctx context.Context, src NewSource) (string, error) {
	if !slices.Contains(Kinds, src.Kind) {
		return "", fmt.Errorf("unknown source kind %q (want one of %v)", src.Kind, Kinds)
	}
	if src.Account == "" || src.Secret == "" {
		return "", errors.New("a source needs an account and a secret")
	}
	var id string
	err := pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx, `INSERT INTO sources (tenant_id, kind, account) VALUES ($1, $2, $3) RETURNING id::text`,
			src.TenantID, src.Kind, src.Account).Scan(&id)
		if err != nil {
			return fmt.Errorf("create source: %w", err)
		}
		return s.addSecret(ctx, tx, id, src.Secret, nil)
	})
	return id, err
}

func (s Store) addSecret(ctx context.Context, tx pgx.Tx, sourceID, secret string, expires *time.Time) error {
	keyID, sealed, err := s.Ring.Seal([]byte(secret), []byte(sourceID))
	if err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `INSERT INTO source_secrets (source_id, key_id, ciphertext, expires_at) VALUES ($1, $2, $3, $4)`,
		sourceID, keyID, sealed, expires); err != nil {
		return fmt.Errorf("store secret: %w", err)
	}
	return nil
}

// CreateWorkspace creates a workspace of the tenant and maps the provider
// customer to it; it returns the workspace id.
func (s Store) CreateWorkspace(ctx context.Context, tenantID, customerID, name string) (string, error) {
	if customerID == "" {
		return "", errors.New("a workspace needs a provider customer id")
	}
	var id string
	err := pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, `INSERT INTO workspaces (tenant_id, name) VALUES ($1, $2) RETURNING id::text`, tenantID, name).Scan(&id); err != nil {
			return fmt.Errorf("create workspace: %w", err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO workspace_customers (tenant_id, customer_id, workspace_id) VALUES ($1, $2, $3)`,
			tenantID, customerID, id); err != nil {
			return fmt.Errorf("map customer %s: %w", customerID, err)
		}
		return nil
	})
	return id, err
}

// Balance returns a workspace's credit balance (0 before its first grant).
func (s Store) Balance(ctx context.Context, workspaceID string) (int64, error) {
	var credits int64
	err := s.Pool.QueryRow(ctx, `SELECT credits FROM balances WHERE workspace_id = $1`, workspaceID).Scan(&credits)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read balance: %w", err)
	}
	return credits, nil
}
