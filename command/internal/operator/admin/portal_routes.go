package admin

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/sluicehq/sluice/command/internal/operator/admintoken"
	"github.com/sluicehq/sluice/command/internal/operator/portallink"
	"github.com/sluicehq/sluice/internal/refusal"
)

// PortalConfig is what minting portal links needs (docs/console.md,
// Portal).
type PortalConfig struct {
	// URL is the portal listener's public base URL
	// (https://portal.example.com), which a link's url starts with; empty:
	// a link's url is its path, for the caller to put after the portal's
	// address.
	URL string
	// LinkTTL is how long a link stays usable unused: default
	// portallink.DefaultTTL (10 minutes), at most portallink.MaxTTL.
	LinkTTL time.Duration
}

// PortalLinkRequest is what a portal link is asked for with.
type PortalLinkRequest struct {
	Scope          admintoken.PortalScope `json:"scope" enum:"destinations,tenant" doc:"destinations: the tenant's endpoints and deliveries only; tenant: the tenant's whole view."`
	Access         portallink.Access      `json:"access" enum:"read,manage" doc:"read: look only (no actions, no payloads); manage: also act, and read the payloads the scope shows."`
	SessionSeconds *int64                 `json:"session_seconds,omitempty" minimum:"1" maximum:"3600" doc:"How long the session the link starts lasts; absent: 3600 (an hour, the longest)."`
}

// PortalLinkCreated is a minted link: its record and its URL, shown once.
type PortalLinkCreated struct {
	portallink.Link
	URL string `json:"url" doc:"The link, shown this once: the portal's open page with the secret in its fragment (never sent to a server; only its SHA-256 is kept). Single use; expires unused at expires_at."`
}

// PortalLink is a portal link's record (never its secret).
type PortalLink struct {
	portallink.Link
}

// PortalLinkPath names a portal link.
type PortalLinkPath struct {
	LinkID string `path:"link_id" format:"uuid" doc:"Portal link id."`
}

// portalTag is the portal links' tag.
const portalTag = "portal-links"

// credentialTags are the tags of the routes that make, show or end
// credentials (admin tokens, tenant API keys, portal links): no portal
// session reaches them, so nothing it makes outlives it.
var credentialTags = []string{"admin-tokens", "api-keys", portalTag}

// portalRoutes registers the portal links: minted for one tenant by an
// operate token (scoped to it, or unscoped), and read back (whether used,
// and the token of the session it started).
func portalRoutes(a *API) {
	links := portallink.Store{Pool: a.cfg.Pool}
	a.Owner("link_id", "portal link", links.Owner)
	type createIn struct {
		TenantPath
		Body PortalLinkRequest
	}
	create := op("create-portal-link", http.MethodPost, "/tenants/{tenant_id}/portal-links",
		"Mint a portal link: one visitor, once, signed into the tenant's destinations or whole view (audited)", portalTag)
	create.DefaultStatus = http.StatusCreated
	create.Description = "The link opens the portal (served on the portal listener, never the admin one) and is used by a POST its page makes: " +
		"single use, expires unused after the deployment's link lifetime (default 10 minutes), and starts a session of at most an hour. " +
		"A portal session with access read neither acts nor reads payloads; with scope destinations it reaches the tenant's endpoints and deliveries only."
	Handle(a, Route{Op: create, Scope: ScopeTenant, Resource: "portal_link", Action: "portal_link.create", ShownOnce: true},
		func(ctx context.Context, c Call, in *createIn) (*created[PortalLinkCreated], error) {
			n := portallink.New{TenantID: in.TenantID, Scope: in.Body.Scope, Access: in.Body.Access, TTL: a.cfg.Portal.LinkTTL}
			if s := in.Body.SessionSeconds; s != nil {
				n.Session = time.Duration(*s) * time.Second
			}
			l, secret, err := portallink.Store{Pool: a.cfg.Pool, Actor: c.Actor}.Mint(ctx, n)
			if err != nil {
				return nil, err
			}
			url := strings.TrimRight(a.cfg.Portal.URL, "/") + portallink.OpenPath + "#" + secret
			return made(PortalLinkCreated{Link: l, URL: url}, "/portal-links/"+l.ID), nil
		})
	Handle(a, Route{Op: op("get-portal-link", http.MethodGet, "/portal-links/{link_id}",
		"A portal link's record (never its secret): whether it was used, and the token of the session it started", portalTag),
		Scope: ScopeTenant},
		func(ctx context.Context, c Call, in *PortalLinkPath) (*body[PortalLink], error) {
			l, err := links.Get(ctx, in.LinkID)
			return reply(PortalLink{l}), err
		})
}

// destinationsTags are the tags of the routes a portal session of scope
// destinations reaches: the tenant's endpoints and their deliveries.
var destinationsTags = []string{"endpoints", "deliveries"}

// portalRefusal is why a portal session's token (admintoken.PortalScope
// set) may not take route r, or nil. On top of the role (access read is
// role read: no action) and the tenant scope every scoped token keeps:
//   - no portal session reaches a credential's routes (credentialTags);
//   - scope destinations reaches the routes tagged endpoints or
//     deliveries only;
//   - access read reads no payload (a read admin token does).
func portalRefusal(op *huma.Operation, r Route, tok admintoken.Token) *refusal.Error {
	switch {
	case tok.Portal == "":
		return nil
	case slices.ContainsFunc(op.Tags, func(t string) bool { return slices.Contains(credentialTags, t) }):
		return refusal.New(refusal.Forbidden, "a portal session reaches no credentials (admin tokens, API keys, portal links)")
	case tok.Portal == admintoken.PortalDestinations && !slices.ContainsFunc(op.Tags, func(t string) bool { return slices.Contains(destinationsTags, t) }):
		return refusal.New(refusal.Forbidden, "this portal session reaches the tenant's destinations only")
	case r.Payload && tok.Role != admintoken.RoleOperate:
		return refusal.New(refusal.Forbidden, "a read-only portal session reads no payloads")
	}
	return nil
}
