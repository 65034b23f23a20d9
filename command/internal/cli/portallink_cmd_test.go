package cli

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/command/internal/operator/admintoken"
	"github.com/sluicehq/sluice/command/internal/operator/portallink"
)

// sluice portallink create mints a link as the API does: shown once, its
// URL under --portal-url, audited as the CLI's; its use signs one visitor
// into the tenant with the scope and access asked for. Lifetimes past the
// caps are usage errors, before anything connects.
func TestPortalLinkCreateMintsALinkFromTheCLI(t *testing.T) {
	t.Parallel()
	f := newTenant(t)
	stdout, stderr, code := cli(t, "portallink", "create", "--tenant", f.tenantID, "--scope", "destinations", "--access", "manage",
		"--ttl", "5m", "--session", "30m", "--portal-url", "https://portal.example/", "-o", "json")
	var out struct {
		ID, URL, Scope, Access string
		SessionSeconds         int64     `json:"session_seconds"`
		ExpiresAt              time.Time `json:"expires_at"`
	}
	if code != 0 || json.Unmarshal([]byte(stdout), &out) != nil {
		t.Fatalf("portallink create: exit %d %s %s", code, stdout, stderr)
	}
	prefix := "https://portal.example" + portallink.OpenPath + "#"
	if !strings.HasPrefix(out.URL, prefix) || out.Scope != "destinations" || out.Access != "manage" || out.SessionSeconds != 1800 ||
		time.Until(out.ExpiresAt) > 5*time.Minute || time.Until(out.ExpiresAt) < 4*time.Minute {
		t.Errorf("the link: %+v", out)
	}
	if n := count(t, `SELECT count(*) FROM admin_audit WHERE action = 'portal_link.create' AND target_id = $1 AND token_id IS NULL`, out.ID); n != 1 {
		t.Errorf("audit rows of portallink create: %d, want 1 (the CLI's)", n)
	}
	used, err := portallink.Store{Pool: suite.pool}.Use(t.Context(), strings.TrimPrefix(out.URL, prefix))
	if err != nil {
		t.Fatal(err)
	}
	if tok := used.Token; tok.TenantID != f.tenantID || tok.Role != admintoken.RoleOperate || tok.Portal != admintoken.PortalDestinations {
		t.Errorf("the link's session: %+v", tok)
	}
	for _, bad := range [][]string{{"--ttl", "2h"}, {"--session", "90m"}} {
		_, stderr, code := cli(t, append([]string{"portallink", "create", "--tenant", f.tenantID, "--scope", "tenant", "--access", "read"}, bad...)...)
		if code == 0 || !strings.Contains(stderr, bad[0]+": must be positive and at most 1h") {
			t.Errorf("portallink create %v: exit %d, %s", bad, code, stderr)
		}
	}
}
