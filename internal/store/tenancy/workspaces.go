package tenancy

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sluicehq/sluice/internal/pg"
	"github.com/sluicehq/sluice/internal/refusal"
)

// Workspace receives a tenant's business effects (credits); provider
// customers map to it.
type Workspace struct {
	ID        string    `json:"id"`
	TenantID  string    `json:"tenant_id"`
	Name      string    `json:"name"`
	Customers []string  `json:"customers" nullable:"false" doc:"Provider customer ids mapped to the workspace."`
	Credits   int64     `json:"credits"`
	CreatedAt time.Time `json:"created_at"`
}

// WorkspaceFilter selects workspaces.
type WorkspaceFilter struct {
	TenantID string // empty: every tenant
	Customer string // a provider customer id mapped to the workspace
}

// CreateWorkspace creates a workspace of the tenant and maps the provider
// customer to it; it returns the workspace id.
func (s Store) CreateWorkspace(ctx context.Context, tenantID, customerID, name string) (string, error) {
	if customerID == "" {
		return "", refusal.InvalidField("customer", "a workspace needs a provider customer id")
	}
	if err := checkID("tenant", tenantID); err != nil {
		return "", err
	}
	var id string
	err := pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, `INSERT INTO workspaces (tenant_id, name) VALUES ($1, $2) RETURNING id::text`, tenantID, name).Scan(&id); err != nil {
			return dbError(err, "create workspace", tenantID)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO workspace_customers (tenant_id, customer_id, workspace_id) VALUES ($1, $2, $3)`,
			tenantID, customerID, id); err != nil {
			return dbError(err, "map customer", tenantID)
		}
		return s.record(ctx, tx, "workspace.create", "workspace", id, tenantID)
	})
	if name, ok := pg.Violation(err); ok && name == "workspace_customers_pkey" {
		var existing string
		_ = s.Pool.QueryRow(ctx, `SELECT workspace_id::text FROM workspace_customers WHERE tenant_id = $1 AND customer_id = $2`,
			tenantID, customerID).Scan(&existing)
		return "", refusal.New(refusal.Conflict, "customer %s of tenant %s already maps to workspace %s", customerID, tenantID, existing)
	}
	return id, err
}

const workspaceColumns = `SELECT w.id::text, w.tenant_id::text, w.name,
       coalesce((SELECT array_agg(c.customer_id ORDER BY c.customer_id) FROM workspace_customers c WHERE c.workspace_id = w.id), '{}'),
       coalesce(b.credits, 0), w.created_at
FROM workspaces w LEFT JOIN balances b ON b.workspace_id = w.id`

func scanWorkspace(row pgx.CollectableRow) (Workspace, error) {
	var w Workspace
	return w, row.Scan(&w.ID, &w.TenantID, &w.Name, &w.Customers, &w.Credits, &w.CreatedAt)
}

// Workspace returns one workspace with its customers and balance.
func (s Store) Workspace(ctx context.Context, id string) (Workspace, error) {
	return readOne(ctx, s, "workspace", id, workspaceColumns+` WHERE w.id = $1`, scanWorkspace)
}

// Workspaces lists workspaces in id order; the second value is the next
// page's cursor ("" on the last page).
func (s Store) Workspaces(ctx context.Context, f WorkspaceFilter, p Page) ([]Workspace, string, error) {
	after, err := p.after()
	if err != nil {
		return nil, "", err
	}
	if f.TenantID != "" {
		if err := checkID("tenant", f.TenantID); err != nil {
			return nil, "", err
		}
	}
	return readPage(ctx, s, "workspaces", p, scanWorkspace, func(w Workspace) string { return w.ID }, workspaceColumns+`
WHERE ($1::uuid IS NULL OR w.id > $1) AND ($2::uuid IS NULL OR w.tenant_id = $2)
  AND ($3 = '' OR EXISTS (SELECT 1 FROM workspace_customers c WHERE c.workspace_id = w.id AND c.customer_id = $3))
ORDER BY w.id LIMIT $4`,
		after, nullable(f.TenantID), f.Customer)
}

// Balance returns a workspace's credit balance (0 before its first grant);
// an unknown workspace is refused (refusal.NotFound), never a zero.
func (s Store) Balance(ctx context.Context, workspaceID string) (int64, error) {
	w, err := s.Workspace(ctx, workspaceID)
	return w.Credits, err
}
