package admin

import (
	"context"
	"encoding/json"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/sluicehq/sluice/internal/audit"
	"github.com/sluicehq/sluice/internal/refusal"
	"github.com/sluicehq/sluice/internal/store/tenancy"
)

// PageQuery is the keyset pagination of every list (exported, like the
// path types below: huma reads the fields of exported embedded structs
// only, and a list embedding an unexported one served neither cursor nor
// limit).
type PageQuery struct {
	Cursor string `query:"cursor" maxLength:"512" doc:"The next_cursor of the previous page; absent: the first page."`
	Limit  int    `query:"limit" minimum:"1" maximum:"500" default:"50" doc:"Most items in the page."`
}

func (q PageQuery) page() tenancy.Page { return tenancy.Page{After: q.Cursor, Limit: q.Limit} }

// listOut is one page of a list.
type listOut[T any] struct {
	Body struct {
		Items      []T    `json:"items" nullable:"false"`
		NextCursor string `json:"next_cursor,omitempty" doc:"Pass as cursor for the next page; absent on the last page."`
	}
}

func list[T any](items []T, next string) *listOut[T] {
	out := &listOut[T]{}
	out.Body.Items = items
	if out.Body.Items == nil {
		out.Body.Items = []T{}
	}
	out.Body.NextCursor = next
	return out
}

type body[T any] struct {
	Body T
}

func reply[T any](v T) *body[T] { return &body[T]{Body: v} }

// created is a create's answer: 201, with Location naming what it made.
type created[T any] struct {
	Location string `header:"Location" doc:"Where what was made is read (GET)."`
	Body     T
}

// made answers a create of v, read at Prefix+path.
func made[T any](v T, path string) *created[T] { return &created[T]{Location: Prefix + path, Body: v} }

// TenantPath and the other path types are embedded in the inputs of the
// operations that take them (exported: huma reads promoted fields only).
type TenantPath struct {
	TenantID string `path:"tenant_id" format:"uuid" doc:"Tenant id."`
}
type SourcePath struct {
	SourceID string `path:"source_id" format:"uuid" doc:"Source id."`
}
type WorkspacePath struct {
	WorkspaceID string `path:"workspace_id" format:"uuid" doc:"Workspace id."`
}
type KeyPath struct {
	KeyID string `path:"key_id" format:"uuid" doc:"API key id."`
}

func op(id, method, path, summary, tag string) huma.Operation {
	o := huma.Operation{OperationID: id, Method: method, Path: path, Summary: summary, Tags: []string{tag}}
	if method == http.MethodPost && !strings.Contains(path, "{") {
		o.DefaultStatus = http.StatusCreated
	}
	return o
}

// tenancyRoutes registers tenants, their rate limits, sources, workspaces,
// API keys and the audit trail.
func tenancyRoutes(a *API) {
	s := a.cfg.Store
	a.Owner("tenant_id", "tenant", func(ctx context.Context, id string) (string, error) {
		t, err := s.Tenant(ctx, id)
		return t.ID, err
	})
	a.Owner("source_id", "source", func(ctx context.Context, id string) (string, error) {
		src, err := s.Source(ctx, id)
		return src.TenantID, err
	})
	a.Owner("workspace_id", "workspace", func(ctx context.Context, id string) (string, error) {
		w, err := s.Workspace(ctx, id)
		return w.TenantID, err
	})
	a.Owner("key_id", "api key", func(ctx context.Context, id string) (string, error) {
		k, err := s.APIKey(ctx, id)
		return k.TenantID, err
	})
	tenantRoutes(a)
	sourceRoutes(a)
	workspaceRoutes(a)
	apiKeyRoutes(a)
	auditRoutes(a)
}

func tenantRoutes(a *API) {
	Handle(a, Route{Op: op("list-tenants", http.MethodGet, "/tenants", "List tenants", "tenants"), Scope: ScopeGlobal},
		func(ctx context.Context, c Call, in *PageQuery) (*listOut[tenancy.Tenant], error) {
			items, next, err := c.Store.Tenants(ctx, "", in.page())
			return list(items, next), err
		})
	type tenantCreateIn struct {
		Body struct {
			Name string `json:"name" maxLength:"200" doc:"A name for people (at most 200 characters)."`
		}
	}
	Handle(a, Route{Op: op("create-tenant", http.MethodPost, "/tenants", "Create a tenant", "tenants"), Scope: ScopeGlobal,
		Resource: "tenant", Action: "tenant.create"},
		func(ctx context.Context, c Call, in *tenantCreateIn) (*created[tenancy.Tenant], error) {
			id, err := c.Store.CreateTenant(ctx, in.Body.Name)
			if err != nil {
				return nil, err
			}
			t, err := c.Store.Tenant(ctx, id)
			return made(t, "/tenants/"+id), err
		})
	Handle(a, Route{Op: op("get-tenant", http.MethodGet, "/tenants/{tenant_id}", "Get a tenant", "tenants"), Scope: ScopeTenant},
		func(ctx context.Context, c Call, in *TenantPath) (*body[tenancy.Tenant], error) {
			t, err := c.Store.Tenant(ctx, in.TenantID)
			return reply(t), err
		})
	type tenantLimitsIn struct {
		TenantPath
		Body tenancy.Limits
	}
	Handle(a, Route{Op: op("set-tenant-limits", http.MethodPut, "/tenants/{tenant_id}/limits",
		"Override the tenant's ingest rate and burst (running instances apply it within 5 s)", "tenants"),
		// Fairness between tenants is the deployment's: unscoped only.
		Scope: ScopeGlobal, Resource: "tenant", Action: "tenant.set_limits"},
		func(ctx context.Context, c Call, in *tenantLimitsIn) (*body[tenancy.Tenant], error) {
			if err := c.Store.SetLimits(ctx, in.TenantID, in.Body); err != nil {
				return nil, err
			}
			t, err := c.Store.Tenant(ctx, in.TenantID)
			return reply(t), err
		})
	Handle(a, Route{Op: op("clear-tenant-limits", http.MethodDelete, "/tenants/{tenant_id}/limits",
		"Return the tenant to the deployment's ingest rate", "tenants"),
		Scope: ScopeGlobal, Resource: "tenant", Action: "tenant.clear_limits"},
		func(ctx context.Context, c Call, in *TenantPath) (*body[tenancy.Tenant], error) {
			if err := c.Store.ClearLimits(ctx, in.TenantID); err != nil {
				return nil, err
			}
			t, err := c.Store.Tenant(ctx, in.TenantID)
			return reply(t), err
		})
}

// NewSourceBody is a source to create.
type NewSourceBody struct {
	TenantID         string          `json:"tenant_id" format:"uuid"`
	Kind             string          `json:"kind" doc:"Provider kind: one of this build's (its provider registry), as sluice source kinds lists them."`
	Account          string          `json:"account" doc:"Provider account the source speaks for (part of the event key)."`
	Secret           string          `json:"secret" maxLength:"1024" writeOnly:"true" doc:"Signing secret as the provider shows it (never shown again, never repeated in a refusal). standard_webhooks: whsec_ followed by the base64 of the key (422 otherwise); stripe: its whsec_... string as-is; github, hmac: any text."`
	ToleranceSeconds *int64          `json:"tolerance_seconds,omitempty" minimum:"1" maximum:"86400" doc:"How far a signed timestamp may be from now, in seconds (at most a day); absent: 300."`
	MaxBodyBytes     int64           `json:"max_body_bytes,omitempty" minimum:"0" maximum:"26214400" doc:"Largest body; absent: the kind's default."`
	IPAllowlist      []CIDR          `json:"ip_allowlist,omitempty" nullable:"false" maxItems:"100" doc:"CIDRs deliveries may come from."`
	Settings         json.RawMessage `json:"settings,omitempty" doc:"The kind's own settings: required for kind hmac (its header, algorithm, eventId and eventType locators, ...); every other built-in kind takes none (422 when given)."`
}

// CIDR is an address prefix (192.0.2.0/24, 2001:db8::/32), as the
// document states it: an IPv4 one exactly, an IPv6 one by its characters
// (netip.ParsePrefix judges the rest, 422).
type CIDR string

func (CIDR) Schema(huma.Registry) *huma.Schema {
	const octet = `(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])`
	return &huma.Schema{Type: huma.TypeString, MinLength: ptr(3), MaxLength: ptr(64),
		Pattern:            `^((` + octet + `\.){3}` + octet + `/(3[0-2]|[12]?[0-9])|[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*/(12[0-8]|1[01][0-9]|[1-9]?[0-9]))$`,
		PatternDescription: "a CIDR: an address and its prefix length (192.0.2.0/24, 2001:db8::/32)"}
}

func (b NewSourceBody) source() (tenancy.NewSource, error) {
	ns := tenancy.NewSource{TenantID: b.TenantID, Kind: b.Kind, Account: b.Account, Secret: b.Secret,
		MaxBodyBytes: b.MaxBodyBytes, Settings: b.Settings}
	if b.ToleranceSeconds != nil {
		ns.Tolerance = time.Duration(*b.ToleranceSeconds) * time.Second
	}
	for _, cidr := range b.IPAllowlist {
		p, err := netip.ParsePrefix(strings.TrimSpace(string(cidr)))
		if err != nil {
			return ns, refusal.InvalidField("ip_allowlist", "%s is not a CIDR", cidr)
		}
		ns.IPAllowlist = append(ns.IPAllowlist, p.Masked())
	}
	return ns, nil
}

// Resolve refuses settings holding what no stored text may (NUL).
func (b *NewSourceBody) Resolve(huma.Context) []error {
	return checkJSONText("body.settings", b.Settings)
}

func sourceRoutes(a *API) {
	type sourceListIn struct {
		PageQuery
		TenantID string `query:"tenant_id" format:"uuid" doc:"Only this tenant's sources."`
		Kind     string `query:"kind" doc:"Only sources of this kind."`
		Disabled string `query:"disabled" enum:"true,false" doc:"Only disabled (true) or enabled (false) sources."`
	}
	Handle(a, Route{Op: op("list-sources", http.MethodGet, "/sources", "List sources", "sources"), Scope: ScopeTenant},
		func(ctx context.Context, c Call, in *sourceListIn) (*listOut[tenancy.Source], error) {
			tenant, err := c.TenantFilter(in.TenantID)
			if err != nil {
				return nil, err
			}
			f := tenancy.SourceFilter{TenantID: tenant, Kind: in.Kind}
			if in.Disabled != "" {
				d := in.Disabled == "true"
				f.Disabled = &d
			}
			items, next, err := c.Store.Sources(ctx, f, in.page())
			return list(items, next), err
		})
	Handle(a, Route{Op: op("create-source", http.MethodPost, "/sources", "Create a source with its first secret", "sources"),
		Scope: ScopeTenant, Resource: "source", Action: "source.create"},
		func(ctx context.Context, c Call, in *body[NewSourceBody]) (*created[tenancy.Source], error) {
			if err := c.Tenant(in.Body.TenantID); err != nil {
				return nil, err
			}
			ns, err := in.Body.source()
			if err != nil {
				return nil, err
			}
			id, err := c.Store.CreateSource(ctx, ns)
			if err != nil {
				return nil, err
			}
			src, err := c.Store.Source(ctx, id)
			return made(src, "/sources/"+id), err
		})
	stateEnum[NewSourceBody](a, "kind", kindNames(a.providers()))
	Handle(a, Route{Op: op("get-source", http.MethodGet, "/sources/{source_id}", "Get a source (never its secrets)", "sources"), Scope: ScopeTenant},
		func(ctx context.Context, c Call, in *SourcePath) (*body[tenancy.Source], error) {
			src, err := c.Store.Source(ctx, in.SourceID)
			return reply(src), err
		})
	for _, change := range []struct {
		id, verb, summary string
		do                func(tenancy.Store, context.Context, string) error
	}{
		{"disable-source", "disable", "Refuse every delivery of the source (404 within 5 s)", tenancy.Store.DisableSource},
		{"enable-source", "enable", "Accept the source's deliveries again (within 5 s)", tenancy.Store.EnableSource},
	} {
		Handle(a, Route{Op: op(change.id, http.MethodPost, "/sources/{source_id}/"+change.verb, change.summary, "sources"),
			Scope: ScopeTenant, Resource: "source", Action: "source." + change.verb},
			func(ctx context.Context, c Call, in *SourcePath) (*body[tenancy.Source], error) {
				if err := change.do(c.Store, ctx, in.SourceID); err != nil {
					return nil, err
				}
				src, err := c.Store.Source(ctx, in.SourceID)
				return reply(src), err
			})
	}
	type sourceRotateIn struct {
		SourcePath
		Body struct {
			Secret         string `json:"secret,omitempty" maxLength:"1024" writeOnly:"true" doc:"The new secret; absent: Sluice makes one and returns it (not for Stripe, which makes its own)."`
			OverlapSeconds *int64 `json:"overlap_seconds,omitempty" minimum:"0" maximum:"2592000" doc:"How long the current secrets stay valid beside the new one, in seconds (at most 30 days); absent: 86400."`
		}
	}
	type sourceRotated struct {
		OldSecretsExpireAt time.Time `json:"old_secrets_expire_at"`
		Secret             string    `json:"secret,omitempty" doc:"Only when Sluice made the secret: shown this once."`
	}
	Handle(a, Route{Op: op("rotate-source-secret", http.MethodPost, "/sources/{source_id}/rotate-secret",
		"Add a new secret; the current ones stay valid for the overlap", "sources"),
		Scope: ScopeTenant, Resource: "source", Action: "source.rotate_secret"},
		func(ctx context.Context, c Call, in *sourceRotateIn) (*body[sourceRotated], error) {
			overlap := 24 * time.Hour
			if in.Body.OverlapSeconds != nil {
				overlap = time.Duration(*in.Body.OverlapSeconds) * time.Second
			}
			var out sourceRotated
			var err error
			if in.Body.Secret == "" {
				out.Secret, out.OldSecretsExpireAt, err = c.Store.RotateGeneratedSecret(ctx, in.SourceID, overlap)
			} else {
				out.OldSecretsExpireAt, err = c.Store.RotateSecret(ctx, in.SourceID, in.Body.Secret, overlap)
			}
			return reply(out), err
		})
	type sourceBodyLimitIn struct {
		SourcePath
		Body struct {
			MaxBodyBytes int64 `json:"max_body_bytes" minimum:"0" maximum:"26214400" doc:"Largest body; 0: the kind's default."`
		}
	}
	Handle(a, Route{Op: op("set-source-body-limit", http.MethodPut, "/sources/{source_id}/body-limit",
		"Set the largest body the source accepts", "sources"),
		// The body limit eats into the unverified bytes an instance holds:
		// the deployment's, unscoped only.
		Scope: ScopeGlobal, Resource: "source", Action: "source.set_body_limit"},
		func(ctx context.Context, c Call, in *sourceBodyLimitIn) (*body[tenancy.Source], error) {
			if err := c.Store.SetBodyLimit(ctx, in.SourceID, in.Body.MaxBodyBytes); err != nil {
				return nil, err
			}
			src, err := c.Store.Source(ctx, in.SourceID)
			return reply(src), err
		})
}

func workspaceRoutes(a *API) {
	type workspaceListIn struct {
		PageQuery
		TenantID string `query:"tenant_id" format:"uuid" doc:"Only this tenant's workspaces."`
		Customer string `query:"customer" doc:"Only the workspace this provider customer maps to."`
	}
	Handle(a, Route{Op: op("list-workspaces", http.MethodGet, "/workspaces", "List workspaces", "workspaces"), Scope: ScopeTenant},
		func(ctx context.Context, c Call, in *workspaceListIn) (*listOut[tenancy.Workspace], error) {
			tenant, err := c.TenantFilter(in.TenantID)
			if err != nil {
				return nil, err
			}
			items, next, err := c.Store.Workspaces(ctx, tenancy.WorkspaceFilter{TenantID: tenant, Customer: in.Customer}, in.page())
			return list(items, next), err
		})
	type workspaceCreateIn struct {
		Body struct {
			TenantID string `json:"tenant_id" format:"uuid"`
			Customer string `json:"customer" doc:"Provider customer id (e.g. cus_...) mapped to the workspace."`
			Name     string `json:"name,omitempty" maxLength:"200"`
		}
	}
	Handle(a, Route{Op: op("create-workspace", http.MethodPost, "/workspaces", "Create a workspace mapped from a provider customer", "workspaces"),
		Scope: ScopeTenant, Resource: "workspace", Action: "workspace.create"},
		func(ctx context.Context, c Call, in *workspaceCreateIn) (*created[tenancy.Workspace], error) {
			if err := c.Tenant(in.Body.TenantID); err != nil {
				return nil, err
			}
			id, err := c.Store.CreateWorkspace(ctx, in.Body.TenantID, in.Body.Customer, in.Body.Name)
			if err != nil {
				return nil, err
			}
			w, err := c.Store.Workspace(ctx, id)
			return made(w, "/workspaces/"+id), err
		})
	Handle(a, Route{Op: op("get-workspace", http.MethodGet, "/workspaces/{workspace_id}", "Get a workspace with its customers and balance", "workspaces"), Scope: ScopeTenant},
		func(ctx context.Context, c Call, in *WorkspacePath) (*body[tenancy.Workspace], error) {
			w, err := c.Store.Workspace(ctx, in.WorkspaceID)
			return reply(w), err
		})
}

func apiKeyRoutes(a *API) {
	type apiKeyListIn struct {
		PageQuery
		TenantID string `query:"tenant_id" format:"uuid" doc:"Only this tenant's keys."`
		Revoked  bool   `query:"revoked" doc:"Include revoked keys."`
	}
	Handle(a, Route{Op: op("list-api-keys", http.MethodGet, "/api-keys", "List tenant API keys (never the keys)", "api-keys"), Scope: ScopeTenant},
		func(ctx context.Context, c Call, in *apiKeyListIn) (*listOut[tenancy.APIKey], error) {
			tenant, err := c.TenantFilter(in.TenantID)
			if err != nil {
				return nil, err
			}
			items, next, err := c.Store.APIKeys(ctx, tenant, in.Revoked, in.page())
			return list(items, next), err
		})
	type apiKeyCreateIn struct {
		Body struct {
			TenantID string `json:"tenant_id" format:"uuid"`
		}
	}
	type apiKeyCreated struct {
		tenancy.APIKey
		Key string `json:"key" doc:"The key for POST /v1/events: shown this once, only its SHA-256 is kept."`
	}
	Handle(a, Route{Op: op("create-api-key", http.MethodPost, "/api-keys", "Create a tenant API key (shown once)", "api-keys"),
		Scope: ScopeTenant, Resource: "apikey", Action: "apikey.create", ShownOnce: true},
		func(ctx context.Context, c Call, in *apiKeyCreateIn) (*created[apiKeyCreated], error) {
			if err := c.Tenant(in.Body.TenantID); err != nil {
				return nil, err
			}
			id, key, err := c.Store.CreateAPIKey(ctx, in.Body.TenantID)
			if err != nil {
				return nil, err
			}
			k, err := c.Store.APIKey(ctx, id)
			return made(apiKeyCreated{APIKey: k, Key: key}, "/api-keys/"+id), err
		})
	Handle(a, Route{Op: op("get-api-key", http.MethodGet, "/api-keys/{key_id}", "A tenant API key's record (never the key)", "api-keys"), Scope: ScopeTenant},
		func(ctx context.Context, c Call, in *KeyPath) (*body[tenancy.APIKey], error) {
			k, err := c.Store.APIKey(ctx, in.KeyID)
			return reply(k), err
		})
	Handle(a, Route{Op: op("revoke-api-key", http.MethodPost, "/api-keys/{key_id}/revoke", "Revoke a tenant API key (refused within 5 s)", "api-keys"),
		Scope: ScopeTenant, Resource: "apikey", Action: "apikey.revoke"},
		func(ctx context.Context, c Call, in *KeyPath) (*body[tenancy.APIKey], error) {
			if err := c.Store.RevokeAPIKey(ctx, in.KeyID); err != nil {
				return nil, err
			}
			k, err := c.Store.APIKey(ctx, in.KeyID)
			return reply(k), err
		})
}

// auditOutcome is an audit outcome as the document states it, with its
// vocabulary (audit.Outcomes).
type auditOutcome string

func (auditOutcome) Schema(huma.Registry) *huma.Schema {
	var enum []any
	for _, o := range audit.Outcomes() {
		enum = append(enum, o)
	}
	return &huma.Schema{Type: huma.TypeString, Enum: enum, Description: "ok: done; the others: refused (not_found, forbidden, conflict, invalid) or failed (error)."}
}

func auditRoutes(a *API) {
	type auditListIn struct {
		TimeRange
		TenantID string       `query:"tenant_id" format:"uuid" doc:"Only what was done in this tenant."`
		Action   string       `query:"action" doc:"Only this action, e.g. source.disable."`
		TokenID  string       `query:"token_id" format:"uuid" doc:"Only what this admin token did."`
		Outcome  auditOutcome `query:"outcome" doc:"Only this outcome."`
		Cursor   string       `query:"cursor" maxLength:"512" doc:"The next_cursor of the previous page; absent: the newest."`
		Limit    int          `query:"limit" minimum:"1" maximum:"500" default:"50"`
	}
	Handle(a, Route{Op: op("list-audit", http.MethodGet, "/audit", "The audit trail, newest first, filtered by tenant, time, action, token and outcome", "audit"), Scope: ScopeTenant},
		func(ctx context.Context, c Call, in *auditListIn) (*listOut[audit.Entry], error) {
			tenant, err := c.TenantFilter(in.TenantID)
			if err != nil {
				return nil, err
			}
			var before int64
			if in.Cursor != "" {
				if before, err = strconv.ParseInt(in.Cursor, 10, 64); err != nil || before <= 0 {
					return nil, refusal.InvalidField("cursor", "not a cursor this API returned")
				}
			}
			if tenant != "" {
				if _, err := c.Store.Tenant(ctx, tenant); err != nil {
					return nil, err
				}
			}
			entries, err := audit.List(ctx, a.cfg.Pool, audit.Filter{TenantID: tenant, Before: before, Limit: in.Limit + 1,
				Since: in.Since, Until: in.Until, Action: in.Action, TokenID: in.TokenID, Outcome: string(in.Outcome)})
			if err != nil {
				return nil, err
			}
			next := ""
			if len(entries) > in.Limit {
				entries = entries[:in.Limit]
				next = strconv.FormatInt(entries[in.Limit-1].ID, 10)
			}
			return list(entries, next), nil
		})
}
