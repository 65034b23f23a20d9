package lifecycle_test

import (
	"context"
	"testing"

	"github.com/sluicehq/sluice/internal/store/lifecycle"
)

// A tenant's effects are the effect groups' to erase: each group's
// statement runs in the erasure's transaction, before the tenant's
// workspaces go (its rows reference them), and the rows it reports are the
// effects counted. Another tenant's effects stay. Without a group's
// statement the erasure fails whole, deleting nothing: its rows still
// reference the workspace.
func TestErasingATenantRunsItsEffectGroupsStatementsFirst(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	if _, err := b.pool.Exec(ctx, `CREATE SCHEMA shop;
		CREATE TABLE shop.reservations (tenant_id uuid NOT NULL, workspace_id uuid NOT NULL REFERENCES workspaces (id), sku text NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	erase := []string{`DELETE FROM shop.reservations WHERE tenant_id = $1`}
	tenant := func(reservations int) string {
		t.Helper()
		var id string
		if err := b.pool.QueryRow(ctx, `WITH t AS (INSERT INTO tenants (name) VALUES ('shop') RETURNING id),
			w AS (INSERT INTO workspaces (tenant_id, name) SELECT id, 'main' FROM t RETURNING id, tenant_id)
			INSERT INTO shop.reservations (tenant_id, workspace_id, sku) SELECT w.tenant_id, w.id, 'sku-' || n FROM w, generate_series(1, $1) n
			RETURNING tenant_id::text`, reservations).Scan(&id); err != nil {
			t.Fatal(err)
		}
		return id
	}
	leaving, staying := tenant(3), tenant(2)

	if _, err := lifecycle.EraseTenant(ctx, b.pool, leaving, nil); err == nil {
		t.Fatal("erased a tenant whose effects reference its workspace without the group's statement")
	}
	if n := b.count(t, `SELECT count(*) FROM tenants WHERE id = $1`, leaving); n != 1 {
		t.Fatal("a failed erasure deleted the tenant")
	}
	e, err := lifecycle.EraseTenant(ctx, b.pool, leaving, erase)
	if err != nil {
		t.Fatal(err)
	}
	if e.Effects != 3 {
		t.Errorf("effects erased: %d, want the 3 reservations", e.Effects)
	}
	for query, want := range map[string]int{
		`SELECT count(*) FROM shop.reservations WHERE tenant_id = $1`: 0,
		`SELECT count(*) FROM tenants WHERE id = $1`:                  0,
	} {
		if n := b.count(t, query, leaving); n != want {
			t.Errorf("%s: %d, want %d", query, n, want)
		}
	}
	if n := b.count(t, `SELECT count(*) FROM shop.reservations WHERE tenant_id = $1`, staying); n != 2 {
		t.Errorf("another tenant's reservations: %d, want its 2", n)
	}
}
