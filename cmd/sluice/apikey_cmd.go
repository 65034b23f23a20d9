package main

import "context"

// APIKeyCmd groups tenant API key administration.
type APIKeyCmd struct {
	Create APIKeyCreateCmd `cmd:"" help:"Create an API key for POST /v1/events; prints its id, then the key (shown only once)."`
}

// APIKeyCreateCmd creates a tenant API key.
type APIKeyCreateCmd struct {
	Output
	Tenant string `required:"" help:"Tenant id."`
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
