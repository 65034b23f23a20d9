package cli

import (
	"context"
	"fmt"

	"github.com/sluicehq/sluice/internal/store/tenancy"
)

// TenantCmd groups tenant administration.
type TenantCmd struct {
	Create      TenantCreateCmd      `cmd:"" help:"Create a tenant; prints its id."`
	List        TenantListCmd        `cmd:"" help:"List tenants."`
	Get         TenantGetCmd         `cmd:"" help:"Show a tenant and its rate limits."`
	SetLimits   TenantSetLimitsCmd   `cmd:"" name:"set-limits" help:"Give a tenant its own ingest rate and burst (running instances apply it within 5s)."`
	ClearLimits TenantClearLimitsCmd `cmd:"" name:"clear-limits" help:"Return a tenant to the deployment's ingest rate (--tenant-rate, --tenant-burst)."`
}

// TenantCreateCmd creates a tenant.
type TenantCreateCmd struct {
	Output
	Name string `required:"" help:"Tenant name." input:"name"`
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

// TenantListCmd lists tenants.
type TenantListCmd struct {
	Output
	Paging
	Name string `name:"name" help:"Only the tenants whose name holds this text (any case), or whose id it is." input:"max=200"`
}

func (c *TenantListCmd) Run(ctx context.Context, g *Globals) error {
	s, done, err := g.store(ctx, false)
	if err != nil {
		return err
	}
	defer done()
	items, next, err := s.Tenants(ctx, c.Name, c.page())
	if err != nil {
		return err
	}
	return printList(c.Output, items, next, "ID\tNAME\tRATE\tBURST\tCREATED", func(t tenancy.Tenant) []any {
		rate, burst := limitsText(t.Limits)
		return []any{t.ID, t.Name, rate, burst, t.CreatedAt.UTC().Format("2006-01-02T15:04:05Z")}
	})
}

func limitsText(l *tenancy.Limits) (rate, burst string) {
	if l == nil {
		return "default", "default"
	}
	return fmt.Sprint(l.Rate), fmt.Sprint(l.Burst)
}

// TenantGetCmd shows one tenant.
type TenantGetCmd struct {
	Output
	ID string `arg:"" name:"tenant-id" help:"Tenant id." input:"uuid"`
}

func (c *TenantGetCmd) Run(ctx context.Context, g *Globals) error {
	s, done, err := g.store(ctx, false)
	if err != nil {
		return err
	}
	defer done()
	t, err := s.Tenant(ctx, c.ID)
	if err != nil {
		return err
	}
	rate, burst := limitsText(t.Limits)
	return printOne(c.Output, t, t.ID, field{"name", t.Name}, field{"rate", rate + " events/s"}, field{"burst", burst})
}

// TenantSetLimitsCmd overrides a tenant's ingest rate.
type TenantSetLimitsCmd struct {
	Output
	Tenant string  `required:"" help:"Tenant id." input:"uuid"`
	Rate   float64 `required:"" help:"Events per second, per ingest instance, after authentication."`
	Burst  int     `required:"" help:"Largest burst."`
}

func (c *TenantSetLimitsCmd) Run(ctx context.Context, g *Globals) error {
	s, done, err := g.store(ctx, false)
	if err != nil {
		return err
	}
	defer done()
	if err := s.SetLimits(ctx, c.Tenant, tenancy.Limits{Rate: c.Rate, Burst: c.Burst}); err != nil {
		return err
	}
	return c.print(c.Tenant, map[string]any{"rate": c.Rate, "burst": c.Burst},
		"limits set: running ingest instances apply them within 5s (their source cache)")
}

// TenantClearLimitsCmd removes a tenant's override.
type TenantClearLimitsCmd struct {
	Output
	Tenant string `required:"" help:"Tenant id." input:"uuid"`
}

func (c *TenantClearLimitsCmd) Run(ctx context.Context, g *Globals) error {
	s, done, err := g.store(ctx, false)
	if err != nil {
		return err
	}
	defer done()
	if err := s.ClearLimits(ctx, c.Tenant); err != nil {
		return err
	}
	return c.print(c.Tenant, map[string]any{"limits": "default"}, "limits cleared: the deployment's rate applies within 5s")
}
