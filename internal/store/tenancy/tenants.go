package tenancy

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/sluicehq/sluice/internal/refusal"
)

// Tenant is a customer of the deployment.
type Tenant struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"created_at"`
	// Limits override ingest's deployment-wide rate for this tenant; nil:
	// the deployment's.
	Limits *Limits `json:"limits,omitempty"`
}

// Limits are a tenant's ingest token bucket: events per second after
// authentication, per ingest instance, and the burst.
type Limits struct {
	Rate  float64 `json:"rate" exclusiveMinimum:"0" maximum:"1000000" doc:"Events per second per ingest instance (above 0, at most 1,000,000)."`
	Burst int     `json:"burst" minimum:"1" maximum:"1000000" doc:"Largest burst of events (1 to 1,000,000)."`
}

// The bounds of Limits (the admin API's document states them too).
const (
	MaxRate  = 1_000_000
	MaxBurst = 1_000_000
)

func (l Limits) check() error {
	if l.Rate <= 0 || l.Rate > MaxRate || math.IsNaN(l.Rate) {
		return refusal.InvalidField("rate", "must be above 0 and at most %d", MaxRate)
	}
	if l.Burst < 1 || l.Burst > MaxBurst {
		return refusal.InvalidField("burst", "must be between 1 and %d", MaxBurst)
	}
	return nil
}

// CreateTenant returns the new tenant's id.
func (s Store) CreateTenant(ctx context.Context, name string) (string, error) {
	if name == "" {
		return "", refusal.InvalidField("name", "a tenant needs a name")
	}
	var id string
	err := pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, `INSERT INTO tenants (name) VALUES ($1) RETURNING id::text`, name).Scan(&id); err != nil {
			return fmt.Errorf("create tenant: %w", err)
		}
		return s.record(ctx, tx, "tenant.create", "tenant", id, id)
	})
	return id, err
}

const tenantColumns = `SELECT t.id::text, t.name, t.created_at, l.rate, l.burst
FROM tenants t LEFT JOIN tenant_limits l ON l.tenant_id = t.id`

func scanTenant(row pgx.CollectableRow) (Tenant, error) {
	var (
		t     Tenant
		rate  *float64
		burst *int
	)
	if err := row.Scan(&t.ID, &t.Name, &t.CreatedAt, &rate, &burst); err != nil {
		return t, err
	}
	if rate != nil && burst != nil {
		t.Limits = &Limits{Rate: *rate, Burst: *burst}
	}
	return t, nil
}

// Tenant returns one tenant.
func (s Store) Tenant(ctx context.Context, id string) (Tenant, error) {
	return readOne(ctx, s, "tenant", id, tenantColumns+` WHERE t.id = $1`, scanTenant)
}

// Tenants lists tenants in id order; the second value is the next page's
// cursor ("" on the last page). Named, when set, keeps the tenants whose
// name holds it (any case) or whose id it is: what a person types to find
// one. The name is matched by reading the tenants' rows, not an index: a
// deployment holds tenants by the thousand, and a page stops at its limit.
func (s Store) Tenants(ctx context.Context, named string, p Page) ([]Tenant, string, error) {
	after, err := p.after()
	if err != nil {
		return nil, "", err
	}
	var like, id *string
	if named = strings.TrimSpace(named); named != "" {
		l := "%" + likeEscaper.Replace(named) + "%"
		like = &l
		if uuid.Validate(named) == nil {
			id = &named
		}
	}
	return readPage(ctx, s, "tenants", p, scanTenant, func(t Tenant) string { return t.ID }, tenantColumns+`
WHERE ($1::uuid IS NULL OR t.id > $1) AND ($2::text IS NULL OR t.name ILIKE $2 OR t.id = $3::uuid)
ORDER BY t.id LIMIT $4`,
		after, like, id)
}

// likeEscaper makes a search's text literal in a LIKE pattern.
var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

// SetLimits overrides ingest's rate for a tenant. Running ingest
// instances apply it within their source cache TTL (5 s).
func (s Store) SetLimits(ctx context.Context, tenantID string, l Limits) error {
	if err := checkID("tenant", tenantID); err != nil {
		return err
	}
	if err := l.check(); err != nil {
		return err
	}
	return pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO tenant_limits (tenant_id, rate, burst) VALUES ($1, $2, $3)
ON CONFLICT (tenant_id) DO UPDATE SET rate = EXCLUDED.rate, burst = EXCLUDED.burst, updated_at = now()`, tenantID, l.Rate, l.Burst)
		if err != nil {
			return dbError(err, "set limits", tenantID)
		}
		return s.record(ctx, tx, "tenant.set_limits", "tenant", tenantID, tenantID)
	})
}

// ClearLimits returns a tenant to the deployment's rate.
func (s Store) ClearLimits(ctx context.Context, tenantID string) error {
	if _, err := s.Tenant(ctx, tenantID); err != nil {
		return err
	}
	return pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `DELETE FROM tenant_limits WHERE tenant_id = $1`, tenantID); err != nil {
			return fmt.Errorf("clear limits: %w", err)
		}
		return s.record(ctx, tx, "tenant.clear_limits", "tenant", tenantID, tenantID)
	})
}
