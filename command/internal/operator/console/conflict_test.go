package console_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/command/internal/operator/admintoken"
	"github.com/sluicehq/sluice/command/internal/operator/console"
	"github.com/sluicehq/sluice/command/internal/operator/operate"
)

// A conflict is dismissed from its page with a note, then marked resolved
// instead: Postgres holds the latest decision with who made it, each is in
// the audit trail, the list's state filter follows it, the page shows both
// times and the decision; a read token is offered no form and another
// tenant's operator cannot decide.
func TestAConflictIsDismissedThenResolvedAndAudited(t *testing.T) {
	t.Parallel()
	b := setup(t)
	w := b.newWorld(t)
	other := b.newWorld(t)
	var received time.Time
	if err := b.pool.QueryRow(t.Context(), `SELECT received_at FROM inbox_conflicts WHERE inbox_id = $1`, w.inboxID).Scan(&received); err != nil {
		t.Fatal(err)
	}
	var inbox int64
	if err := b.pool.QueryRow(t.Context(), `SELECT $1::bigint`, w.inboxID).Scan(&inbox); err != nil {
		t.Fatal(err)
	}
	id := operate.ConflictID(inbox, received)
	page := console.Prefix + "/conflicts/" + id
	rec, token := b.token(t, admintoken.RoleOperate, w.tenant)
	c := b.client(t)
	b.signIn(t, c, token)
	decision := func() (outcome, note, actor string) {
		t.Helper()
		if err := b.pool.QueryRow(t.Context(), `SELECT outcome, note, actor FROM conflict_outcomes WHERE inbox_id = $1 AND received_at = $2`,
			inbox, received).Scan(&outcome, &note, &actor); err != nil {
			t.Fatal(err)
		}
		return
	}
	listed := func(state string) bool {
		return strings.Contains(b.page(t, c, console.Prefix+"/conflicts?"+url.Values{"state": {state}}.Encode()), `href="/console/conflicts/`+id+`"`)
	}
	if !listed("open") || listed("dismissed") {
		t.Fatalf("an undecided conflict is not listed as open only")
	}
	for _, step := range []struct{ outcome, note string }{{"dismissed", "the provider resent a stale copy"}, {"resolved", "reconciled"}} {
		status, body := b.post(t, c, page, page+"/decide", map[string][]string{"outcome": {step.outcome}, "note": {step.note}})
		if status != http.StatusSeeOther {
			t.Fatalf("decide %s: %d %.300s", step.outcome, status, body)
		}
		if o, n, a := decision(); o != step.outcome || n != step.note || a != rec.Name {
			t.Errorf("after %s Postgres holds %q %q by %q", step.outcome, o, n, a)
		}
		if listed("open") || !listed(step.outcome) {
			t.Errorf("after %s the list's state filter does not follow it", step.outcome)
		}
	}
	if n := b.audited(t, rec.ID, "conflict.decide"); n != 2 {
		t.Errorf("%d decisions audited, want 2", n)
	}
	contains(t, "the conflict's page", b.page(t, c, page), `badge good">resolved<`, "“reconciled”", "Deciding again replaces")
	if strings.Contains(b.page(t, b.signedIn(t, admintoken.RoleRead, w.tenant), page), "/decide") {
		t.Errorf("a read token is offered the decision's form")
	}
	oc := b.signedIn(t, admintoken.RoleOperate, other.tenant)
	status, _ := b.post(t, oc, console.Prefix+"/conflicts", page+"/decide", map[string][]string{"outcome": {"dismissed"}})
	if status != http.StatusNotFound {
		t.Errorf("another tenant's operator deciding: %d, want 404", status)
	}
	if o, _, _ := decision(); o != "resolved" {
		t.Errorf("another tenant's operator changed the decision to %s", o)
	}
}
