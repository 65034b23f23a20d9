package admin_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/command/internal/operator/admintoken"
	"github.com/sluicehq/sluice/command/internal/operator/operate"
)

// The overview of a scoped token counts its own tenant only; an unscoped
// token sees the same figures when it names that tenant.
func TestOverviewCountsTheTokensTenant(t *testing.T) {
	t.Parallel()
	b := setup(t)
	a, other := b.newWorld(t), b.newWorld(t)
	b.seedPoison(t, other, "other tenant's poison")
	scoped := b.token(t, admintoken.RoleRead, a.tenant)
	status, raw := b.do(t, scoped, http.MethodGet, "/admin/v1/overview", nil)
	if status != http.StatusOK {
		t.Fatalf("overview: %d %s", status, raw)
	}
	ov := decode[operate.Overview](t, raw)
	if ov.Accepted != 1 || ov.DeadLettersPending != 2 || ov.Conflicts != 1 {
		t.Errorf("scoped overview: accepted %d, dead letters %d, conflicts %d; want A's 1, 2 and 1", ov.Accepted, ov.DeadLettersPending, ov.Conflicts)
	}
	if len(ov.Minutes) != 1 || ov.Minutes[0].ByStatus["published"] != 1 {
		t.Errorf("scoped overview's minutes: %+v, want one minute with A's published event", ov.Minutes)
	}
	root := b.token(t, admintoken.RoleRead, "")
	status, raw = b.do(t, root, http.MethodGet, "/admin/v1/overview?tenant_id="+a.tenant, nil)
	if got := decode[operate.Overview](t, raw); status != http.StatusOK || got.Accepted != ov.Accepted || got.DeadLettersPending != ov.DeadLettersPending {
		t.Errorf("unscoped overview of A: %d %s, want the scoped token's figures", status, raw)
	}
	if status, raw := b.do(t, scoped, http.MethodGet, "/admin/v1/overview?tenant_id="+other.tenant, nil); status != http.StatusNotFound {
		t.Errorf("scoped overview of another tenant: %d %s, want 404", status, raw)
	}
}

// The count of a filter is what the filtered replay then replays.
func TestDeadLetterCountIsTheReplaysDryRun(t *testing.T) {
	t.Parallel()
	b := setup(t)
	w := b.newWorld(t)
	op := b.token(t, admintoken.RoleOperate, w.tenant)
	q := url.Values{"tenant_id": {w.tenant}, "reason": {walkSetReason}}
	count := func() int64 {
		t.Helper()
		status, raw := b.do(t, op, http.MethodGet, "/admin/v1/dead-letters/count?"+q.Encode(), nil)
		if status != http.StatusOK {
			t.Fatalf("count: %d %s", status, raw)
		}
		return decode[struct {
			Pending int64 `json:"pending"`
		}](t, raw).Pending
	}
	if n := count(); n != 1 {
		t.Fatalf("count of the walk-set letters: %d, want 1", n)
	}
	status, raw := b.do(t, op, http.MethodPost, "/admin/v1/dead-letters/replay", map[string]any{"tenant_id": w.tenant, "reason": walkSetReason})
	if res := decode[operate.ReplayResult](t, raw); status != http.StatusOK || len(res.Replayed) != 1 {
		t.Fatalf("replay: %d %s, want the one letter counted", status, raw)
	}
	if n := count(); n != 0 {
		t.Errorf("count after the replay: %d, want 0", n)
	}
}

// The lag over the last hour is the deployment's: an unscoped token reads
// the process's samples (none yet in this test's process: an empty list,
// not null), a scoped one is refused.
func TestOverviewSamplesAreTheDeployments(t *testing.T) {
	t.Parallel()
	b := setup(t)
	w := b.newWorld(t)
	status, raw := b.do(t, b.token(t, admintoken.RoleRead, ""), http.MethodGet, "/admin/v1/overview/samples", nil)
	if status != http.StatusOK || !strings.Contains(string(raw), `"samples":[]`) || !strings.Contains(string(raw), `"every_seconds":15`) {
		t.Errorf("unscoped: %d %s, want an empty history", status, raw)
	}
	if status, raw := b.do(t, b.token(t, admintoken.RoleRead, w.tenant), http.MethodGet, "/admin/v1/overview/samples", nil); status != http.StatusForbidden {
		t.Errorf("scoped: %d %s, want 403", status, raw)
	}
}
