package cli

import (
	"context"
	"strings"
	"time"

	"github.com/sluicehq/sluice/command/internal/operator/admintoken"
	"github.com/sluicehq/sluice/command/internal/operator/input"
	"github.com/sluicehq/sluice/command/internal/operator/portallink"
	"github.com/sluicehq/sluice/internal/audit"
)

// PortalLinkCmd groups portal links (docs/console.md, Portal).
type PortalLinkCmd struct {
	Create PortalLinkCreateCmd `cmd:"" help:"Mint a portal link: one visitor, once, signed into a tenant's destinations or whole view; prints its id, then the link (shown only once)."`
}

// PortalLinkCreateCmd mints a link, as POST
// /admin/v1/tenants/{id}/portal-links does, from the command line: the
// audit trail records it as the CLI's.
type PortalLinkCreateCmd struct {
	Output
	Tenant    string        `required:"" help:"The tenant the link signs into." input:"uuid"`
	Scope     string        `required:"" enum:"destinations,tenant" help:"destinations: the tenant's endpoints and deliveries only; tenant: the tenant's whole view."`
	Access    string        `required:"" enum:"read,manage" help:"read: look only (no payloads, no actions); manage: also act, and read the payloads the scope shows."`
	TTL       time.Duration `name:"ttl" env:"SLUICE_PORTAL_LINK_TTL" default:"10m" help:"How long the link stays usable unused (at most 1h)."`
	Session   time.Duration `default:"1h" help:"How long the session the link starts lasts, in whole seconds (at most 1h)."`
	PortalURL string        `name:"portal-url" env:"SLUICE_PORTAL_URL" help:"The portal's public base URL (https://portal.example.com) the link starts with; empty: the link is its path."`
}

// Validate refuses lifetimes the store would not give, before anything
// connects (a usage error).
func (c *PortalLinkCreateCmd) Validate() error {
	if err := input.Lifetime("--ttl", c.TTL, portallink.MaxTTL); err != nil {
		return err
	}
	return input.Lifetime("--session", c.Session, portallink.MaxSession)
}

func (c *PortalLinkCreateCmd) Run(ctx context.Context, g *Globals) error {
	pool, err := g.pool(ctx)
	if err != nil {
		return err
	}
	defer pool.Close()
	l, secret, err := portallink.Store{Pool: pool, Actor: &audit.Actor{}}.Mint(ctx, portallink.New{TenantID: c.Tenant,
		Scope: admintoken.PortalScope(c.Scope), Access: portallink.Access(c.Access), TTL: c.TTL, Session: c.Session})
	if err != nil {
		return err
	}
	url := strings.TrimRight(c.PortalURL, "/") + portallink.OpenPath + "#" + secret
	return c.print(l.ID, map[string]any{"tenant_id": l.TenantID, "scope": l.Scope, "access": l.Access,
		"session_seconds": l.SessionSeconds, "expires_at": l.ExpiresAt, "url": url},
		url, "shown only once: open it once before "+l.ExpiresAt.UTC().Format(time.RFC3339)+" (sluice admintoken revoke ends its session)")
}
