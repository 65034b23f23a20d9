package admin

import (
	"context"
	"net/http"
	"time"

	"github.com/sluicehq/sluice/command/internal/operator/admintoken"
)

// TokenPath names an admin token.
type TokenPath struct {
	TokenID string `path:"token_id" format:"uuid" doc:"Admin token id."`
}

// NewTokenBody is an admin token to make.
type NewTokenBody struct {
	Name     string          `json:"name,omitempty" maxLength:"200" doc:"Who or what holds it, for the list and the audit trail."`
	Role     admintoken.Role `json:"role" enum:"read,operate" doc:"read: GET only (payloads included, audited); operate: also acts."`
	TenantID string          `json:"tenant_id,omitempty" format:"uuid" doc:"Confine the token to this tenant; absent: every tenant."`
	// ExpiresInSeconds is the lifetime: positive, at most a year.
	ExpiresInSeconds *int64 `json:"expires_in_seconds,omitempty" minimum:"1" maximum:"31536000" doc:"Lifetime in seconds, at most a year; absent: 2592000 (720 h)."`
}

// tokenRoutes registers the admin tokens: listed (flagging those that
// never expire), shown, made and revoked, by unscoped tokens only (a
// tenant's token cannot mint others).
func tokenRoutes(a *API) {
	Handle(a, Route{Op: op("list-admin-tokens", http.MethodGet, "/admin-tokens",
		"Every admin token, newest first, revoked ones included (never the tokens); no_expiry flags those that never expire", "admin-tokens"),
		Scope: ScopeGlobal},
		func(ctx context.Context, c Call, _ *struct{}) (*listOut[admintoken.Token], error) {
			tokens, err := a.tokens.List(ctx)
			return list(tokens, ""), err
		})
	Handle(a, Route{Op: op("get-admin-token", http.MethodGet, "/admin-tokens/{token_id}", "An admin token's record", "admin-tokens"),
		Scope: ScopeGlobal},
		func(ctx context.Context, c Call, in *TokenPath) (*body[admintoken.Token], error) {
			t, err := a.tokens.Get(ctx, in.TokenID)
			return reply(t), err
		})
	type createIn struct {
		Body NewTokenBody
	}
	type tokenCreated struct {
		admintoken.Token
		Secret string `json:"token" doc:"The bearer token: shown this once, only its SHA-256 is kept."`
	}
	Handle(a, Route{Op: op("create-admin-token", http.MethodPost, "/admin-tokens", "Make an admin token (shown once)", "admin-tokens"),
		Scope: ScopeGlobal, Resource: "admintoken", Action: "admintoken.create", ShownOnce: true},
		func(ctx context.Context, c Call, in *createIn) (*created[tokenCreated], error) {
			n := admintoken.New{Name: in.Body.Name, Role: in.Body.Role, TenantID: in.Body.TenantID}
			if in.Body.ExpiresInSeconds != nil {
				n.TTL = time.Duration(*in.Body.ExpiresInSeconds) * time.Second
			}
			t, secret, err := admintoken.Store{Pool: a.cfg.Pool, Actor: c.Actor}.Create(ctx, n)
			if err != nil {
				return nil, err
			}
			return made(tokenCreated{Token: t, Secret: secret}, "/admin-tokens/"+t.ID), nil
		})
	Handle(a, Route{Op: op("revoke-admin-token", http.MethodPost, "/admin-tokens/{token_id}/revoke", "Revoke an admin token (refused from the next request)", "admin-tokens"),
		Scope: ScopeGlobal, Resource: "admintoken", Action: "admintoken.revoke"},
		func(ctx context.Context, c Call, in *TokenPath) (*body[admintoken.Token], error) {
			if err := (admintoken.Store{Pool: a.cfg.Pool, Actor: c.Actor}).Revoke(ctx, in.TokenID); err != nil {
				return nil, err
			}
			t, err := a.tokens.Get(ctx, in.TokenID)
			return reply(t), err
		})
}
