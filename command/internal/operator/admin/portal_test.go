package admin_test

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/command/internal/operator/admin"
	"github.com/sluicehq/sluice/command/internal/operator/admintoken"
	"github.com/sluicehq/sluice/command/internal/operator/portallink"
)

// payloadRoutes are the operations that return an event's body (Route's
// Payload): a read-only portal session reads none of them.
var payloadRoutes = []string{"get-event-payload", "get-dead-letter", "get-conflict", "get-delivery-request"}

// portalKind is one kind of portal session.
type portalKind struct {
	scope  admintoken.PortalScope
	access portallink.Access
}

// portalMay is what a portal session of kind k may take, as
// docs/console.md states it: tenant routes only; never a credential's
// (admin tokens, API keys, portal links); with scope destinations only the
// endpoints' and deliveries'; with access read no action and no payload.
func portalMay(k portalKind, o operation, tags []string) bool {
	credential := slices.ContainsFunc(tags, func(t string) bool { return t == "admin-tokens" || t == "api-keys" || t == "portal-links" })
	destinations := slices.ContainsFunc(tags, func(t string) bool { return t == "endpoints" || t == "deliveries" })
	switch {
	case o.scope != string(admin.ScopeTenant) || credential:
		return false
	case k.scope == admintoken.PortalDestinations && !destinations:
		return false
	case k.access == portallink.AccessRead && (o.method != http.MethodGet || slices.Contains(payloadRoutes, o.id)):
		return false
	}
	return true
}

// TestEveryRouteKeepsPortalScope walks every operation with a portal
// session's token of each kind (scope destinations or tenant, access read
// or manage), aimed at its own tenant: what the kind may not take is 403
// and changes nothing; what it may take is not refused (a GET succeeds).
func TestEveryRouteKeepsPortalScope(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ops := b.operations(t)
	tags := b.operationTags(t)
	kinds := []portalKind{{admintoken.PortalDestinations, portallink.AccessRead}, {admintoken.PortalDestinations, portallink.AccessManage},
		{admintoken.PortalTenant, portallink.AccessRead}, {admintoken.PortalTenant, portallink.AccessManage}}
	for _, k := range kinds {
		t.Run(string(k.scope)+"-"+string(k.access), func(t *testing.T) {
			t.Parallel()
			own := b.newWorld(t)
			_, token, err := admintoken.Store{Pool: b.pool}.Create(t.Context(), admintoken.New{Name: t.Name(), Role: k.access.Role(),
				TenantID: own.tenant, Portal: k.scope})
			if err != nil {
				t.Fatal(err)
			}
			allowed, refused := 0, 0
			for _, r := range b.routes {
				o, ok := ops[r]
				if !strings.HasPrefix(r.path, admin.Prefix) || documents[r.path] || !ok {
					continue
				}
				aimed := aim(o.path, own, requestBodies[o.id])
				if q, ok := requestQueries[o.id]; ok {
					aimed.path = o.path + "?" + strings.ReplaceAll(q, "ENDPOINT", own.endpoint)
				}
				if r.method == http.MethodDelete {
					aimed.path = strings.ReplaceAll(aimed.path, own.endpoint, own.doomed)
				}
				before := b.fingerprint(t, own.tenant)
				status, got := b.do(t, token, r.method, aimed.path, aimed.body)
				if !portalMay(k, o, tags[o.id]) {
					refused++
					if status != http.StatusForbidden {
						t.Errorf("%s (%s %s): %d %.300s, want 403", o.id, r.method, aimed.path, status, got)
					}
					if after := b.fingerprint(t, own.tenant); after != before {
						t.Errorf("%s refused but changed the tenant: %s -> %s", o.id, before, after)
					}
					continue
				}
				allowed++
				switch {
				case status == http.StatusForbidden || status == http.StatusUnauthorized:
					t.Errorf("%s (%s %s): %d %.300s, want it allowed", o.id, r.method, aimed.path, status, got)
				case r.method == http.MethodGet && status >= 300:
					t.Errorf("%s (GET %s): %d %.300s, want 2xx", o.id, aimed.path, status, got)
				}
			}
			if allowed == 0 || refused < 10 {
				t.Fatalf("allowed %d, refused %d: the walk did not reach the routes", allowed, refused)
			}
		})
	}
}

// operationTags are the served document's tags by operation id.
func (b *bundle) operationTags(t *testing.T) map[string][]string {
	t.Helper()
	b.load(t)
	out := map[string][]string{}
	paths, _ := b.spec["paths"].(map[string]any)
	for _, item := range paths {
		for _, raw := range item.(map[string]any) {
			o, ok := raw.(map[string]any)
			if !ok {
				continue
			}
			id, _ := o["operationId"].(string)
			list, _ := o["tags"].([]any)
			for _, tag := range list {
				out[id] = append(out[id], tag.(string))
			}
		}
	}
	return out
}

// A portal link is minted by an operate token for its tenant, shown once
// (its secret in the URL's fragment, only the secret's SHA-256 kept), used
// once, refused when used again or expired, and every minting and use is
// audited.
func TestPortalLinkIsUsedOnceAndAudited(t *testing.T) {
	t.Parallel()
	b := setup(t)
	w := b.newWorld(t)
	operator := b.token(t, admintoken.RoleOperate, w.tenant)
	mint := func(t *testing.T, token string) (int, admin.PortalLinkCreated, []byte) {
		t.Helper()
		status, got := b.do(t, token, http.MethodPost, admin.Prefix+"/tenants/"+w.tenant+"/portal-links", map[string]any{"scope": "destinations", "access": "manage", "session_seconds": 600})
		var link admin.PortalLinkCreated
		_ = json.Unmarshal(got, &link)
		return status, link, got
	}
	status, link, got := mint(t, operator)
	if status != http.StatusCreated {
		t.Fatalf("mint: %d %s", status, got)
	}
	path, secret, ok := strings.Cut(link.URL, "#")
	if !ok || path != portallink.OpenPath || len(secret) < 43 || link.SessionSeconds != 600 {
		t.Fatalf("link %+v: want %s#<secret>, a session of 600 s", link, portallink.OpenPath)
	}
	var kept int
	sum := sha256.Sum256([]byte(secret))
	if err := b.pool.QueryRow(t.Context(), `SELECT count(*) FROM portal_links WHERE id = $1 AND secret_sha256 = $2`, link.ID, sum[:]).Scan(&kept); err != nil || kept != 1 {
		t.Fatalf("the link's row keeps its secret's SHA-256: %d %v", kept, err)
	}
	if status, got := b.do(t, b.token(t, admintoken.RoleRead, w.tenant), http.MethodPost, admin.Prefix+"/tenants/"+w.tenant+"/portal-links",
		map[string]any{"scope": "tenant", "access": "read"}); status != http.StatusForbidden {
		t.Errorf("a read token mints: %d %s, want 403", status, got)
	}

	links := portallink.Store{Pool: b.pool}
	session, err := links.Use(t.Context(), secret)
	if err != nil {
		t.Fatal(err)
	}
	if session.Token.Portal != admintoken.PortalDestinations || session.Token.Role != admintoken.RoleOperate || session.Token.TenantID != w.tenant ||
		!strings.HasPrefix(session.Secret, admintoken.PortalPrefix) || session.Token.ExpiresAt.Sub(session.Token.CreatedAt).Seconds() > 601 {
		t.Fatalf("session token %+v", session.Token)
	}
	if status, _, got := mint(t, session.Secret); status != http.StatusForbidden {
		t.Errorf("a portal session mints a link: %d %s, want 403", status, got)
	}
	if _, err := links.Use(t.Context(), secret); err != portallink.ErrUsed {
		t.Errorf("second use: %v, want %v", err, portallink.ErrUsed)
	}
	_, expired, _ := mint(t, operator)
	if _, err := b.pool.Exec(t.Context(), `UPDATE portal_links SET expires_at = now() - interval '1 second' WHERE id = $1`, expired.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := links.Use(t.Context(), strings.SplitN(expired.URL, "#", 2)[1]); err != portallink.ErrExpired {
		t.Errorf("expired link: %v, want %v", err, portallink.ErrExpired)
	}
	if status, got := b.do(t, operator, http.MethodGet, admin.Prefix+"/portal-links/"+link.ID, nil); status != http.StatusOK ||
		!strings.Contains(string(got), session.Token.ID) || strings.Contains(string(got), secret) {
		t.Errorf("the link's record: %d %s, want its session's token and never its secret", status, got)
	}
	var trail string
	err = b.pool.QueryRow(context.Background(), `SELECT string_agg(action || ':' || outcome, ' ' ORDER BY id) FROM admin_audit
WHERE resource = 'portal_link' AND target_id IN ($1, $2)`, link.ID, expired.ID).Scan(&trail)
	if want := "portal_link.create:ok portal_link.use:ok portal_link.use:conflict portal_link.create:ok portal_link.use:forbidden"; err != nil || trail != want {
		t.Errorf("audit: %q %v, want %q", trail, err, want)
	}

	// A day after it expired, a link's row goes with the next minting; its
	// audit rows stay.
	if _, err := b.pool.Exec(t.Context(), `UPDATE portal_links SET expires_at = now() - interval '25 hours' WHERE id = $1`, expired.ID); err != nil {
		t.Fatal(err)
	}
	mint(t, operator)
	if status, got := b.do(t, operator, http.MethodGet, admin.Prefix+"/portal-links/"+expired.ID, nil); status != http.StatusNotFound {
		t.Errorf("a link expired over a day ago: %d %s, want 404", status, got)
	}
}
