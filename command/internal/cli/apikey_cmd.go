package cli

import (
	"context"

	"github.com/sluicehq/sluice/internal/store/tenancy"
)

// APIKeyCmd groups tenant API key administration.
type APIKeyCmd struct {
	Create APIKeyCreateCmd `cmd:"" help:"Create an API key for POST /v1/events; prints its id, then the key (shown only once)."`
	List   APIKeyListCmd   `cmd:"" help:"List API keys (never the keys themselves)."`
	Revoke APIKeyRevokeCmd `cmd:"" help:"Revoke an API key (refused by running instances within 5s)."`
}

// APIKeyCreateCmd creates a tenant API key.
type APIKeyCreateCmd struct {
	Output
	Tenant string `required:"" help:"Tenant id." input:"uuid"`
}

func (c *APIKeyCreateCmd) Run(ctx context.Context, g *Globals) error {
	s, done, err := g.store(ctx, false)
	if err != nil {
		return err
	}
	defer done()
	id, key, err := s.CreateAPIKey(ctx, c.Tenant)
	if err != nil {
		return err
	}
	return c.print(id, map[string]any{"tenant_id": c.Tenant, "key": key}, key, "store it now: only its SHA-256 is kept")
}

// APIKeyListCmd lists keys.
type APIKeyListCmd struct {
	Output
	Paging
	Tenant  string `help:"Only this tenant's keys." input:"uuid"`
	Revoked bool   `help:"Include revoked keys."`
}

func (c *APIKeyListCmd) Run(ctx context.Context, g *Globals) error {
	s, done, err := g.store(ctx, false)
	if err != nil {
		return err
	}
	defer done()
	items, next, err := s.APIKeys(ctx, c.Tenant, c.Revoked, c.page())
	if err != nil {
		return err
	}
	return printList(c.Output, items, next, "ID\tTENANT\tCREATED\tREVOKED", func(k tenancy.APIKey) []any {
		revoked := "-"
		if k.RevokedAt != nil {
			revoked = k.RevokedAt.UTC().Format("2006-01-02T15:04:05Z")
		}
		return []any{k.ID, k.TenantID, k.CreatedAt.UTC().Format("2006-01-02T15:04:05Z"), revoked}
	})
}

// APIKeyRevokeCmd revokes a key.
type APIKeyRevokeCmd struct {
	Output
	ID string `arg:"" name:"key-id" help:"API key id (from apikey list)." input:"uuid"`
}

func (c *APIKeyRevokeCmd) Run(ctx context.Context, g *Globals) error {
	s, done, err := g.store(ctx, false)
	if err != nil {
		return err
	}
	defer done()
	if err := s.RevokeAPIKey(ctx, c.ID); err != nil {
		return err
	}
	return c.print(c.ID, map[string]any{"revoked": true}, "revoked: running instances refuse it within 5s (their key cache)")
}
