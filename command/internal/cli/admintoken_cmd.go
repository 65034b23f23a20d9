package cli

import (
	"context"
	"time"

	"github.com/sluicehq/sluice/command/internal/operator/admintoken"
	"github.com/sluicehq/sluice/command/internal/operator/input"
	"github.com/sluicehq/sluice/internal/audit"
)

// AdminTokenCmd groups the admin API's bearer tokens.
type AdminTokenCmd struct {
	Create AdminTokenCreateCmd `cmd:"" help:"Create an admin API token; prints its id, then the token (shown only once)."`
	List   AdminTokenListCmd   `cmd:"" help:"List admin tokens (never the tokens themselves)."`
	Revoke AdminTokenRevokeCmd `cmd:"" help:"Revoke an admin token (refused at once)."`
}

// AdminTokenCreateCmd creates a token.
type AdminTokenCreateCmd struct {
	Output
	Role    string        `required:"" enum:"read,operate" help:"read: GET only (payloads included, audited); operate: also acts (create, disable, rotate, replay, rewind)."`
	Tenant  string        `help:"Confine the token to this tenant (other tenants' ids are 404, cross-tenant routes 403); default: every tenant." input:"uuid"`
	Expires time.Duration `default:"720h" help:"Lifetime: positive, at most a year (8760h)."`
	Name    string        `help:"Who or what holds it, for the list and the audit trail." input:"name"`
}

// Validate refuses a lifetime the store would not give, before anything
// connects (a usage error).
func (c *AdminTokenCreateCmd) Validate() error {
	return input.Lifetime("--expires", c.Expires, admintoken.MaxTTL)
}

func (c *AdminTokenCreateCmd) Run(ctx context.Context, g *Globals) error {
	pool, err := g.pool(ctx)
	if err != nil {
		return err
	}
	defer pool.Close()
	t, secret, err := admintoken.Store{Pool: pool, Actor: &audit.Actor{}}.Create(ctx, admintoken.New{Name: c.Name, Role: admintoken.Role(c.Role), TenantID: c.Tenant, TTL: c.Expires})
	if err != nil {
		return err
	}
	return c.print(t.ID, map[string]any{"role": t.Role, "tenant_id": t.TenantID, "expires_at": t.ExpiresAt, "name": t.Name, "token": secret},
		secret, "store it now: only its SHA-256 is kept. Use it as: Authorization: Bearer <token>")
}

// AdminTokenListCmd lists tokens.
type AdminTokenListCmd struct {
	Output
}

func (c *AdminTokenListCmd) Run(ctx context.Context, g *Globals) error {
	pool, err := g.pool(ctx)
	if err != nil {
		return err
	}
	defer pool.Close()
	tokens, err := admintoken.Store{Pool: pool, Actor: &audit.Actor{}}.List(ctx)
	if err != nil {
		return err
	}
	// A token an earlier release made without an expiry says so: replace it,
	// then revoke it.
	return printList(c.Output, tokens, "", "ID\tNAME\tROLE\tTENANT\tEXPIRES\tREVOKED", func(t admintoken.Token) []any {
		expires := timeOrDash(t.ExpiresAt)
		if t.NoExpiry {
			expires = "never (replace it)"
		}
		return []any{t.ID, orDash(t.Name), t.Role, orDash(t.TenantID), expires, timeOrDash(t.RevokedAt)}
	})
}

func timeOrDash(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

// AdminTokenRevokeCmd revokes a token.
type AdminTokenRevokeCmd struct {
	Output
	ID string `arg:"" name:"token-id" help:"Token id (from admintoken list)." input:"uuid"`
}

func (c *AdminTokenRevokeCmd) Run(ctx context.Context, g *Globals) error {
	pool, err := g.pool(ctx)
	if err != nil {
		return err
	}
	defer pool.Close()
	if err := (admintoken.Store{Pool: pool, Actor: &audit.Actor{}}).Revoke(ctx, c.ID); err != nil {
		return err
	}
	return c.print(c.ID, map[string]any{"revoked": true}, "revoked: refused from the next request on")
}
