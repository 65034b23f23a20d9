package operate_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sluicehq/sluice/command/internal/operator/operate"
	"github.com/sluicehq/sluice/internal/refusal"
	"github.com/sluicehq/sluice/internal/store/inbox"
)

// A conflict (same event key, different content) is listed for its tenant
// and shown with both bodies; another tenant cannot see it.
func TestConflictsAreListedAndShownWithBothBodies(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Microsecond)
	id := b.seed(t, row{b.tenantA, b.sourceA, "evt_c", "stripe.invoice.paid", "in_c", inbox.StatusPublished, now.Add(-time.Minute)})[0]
	if _, err := b.pool.Exec(ctx, `INSERT INTO inbox_conflicts (inbox_id, received_at, body_sha256, body) VALUES ($1, $2, '\x01', 'newcomer')`, id, now); err != nil {
		t.Fatal(err)
	}
	page, err := b.op.Conflicts(ctx, &operate.Scope{TenantID: b.tenantA}, operate.ConflictFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Items) != 1 || page.Items[0].InboxID != id || page.Items[0].EventID != "evt_c" {
		t.Fatalf("conflicts = %+v, want the one of evt_c", page.Items)
	}
	c, err := b.op.Conflict(ctx, nil, id, page.Items[0].ReceivedAt)
	if err != nil {
		t.Fatal(err)
	}
	if string(c.Original.Body) != `{"id":"evt_c"}` || string(c.Newcomer.Body) != "newcomer" {
		t.Errorf("bodies = %q and %q", c.Original.Body, c.Newcomer.Body)
	}
	other := &operate.Scope{TenantID: b.tenantB}
	if p, err := b.op.Conflicts(ctx, other, operate.ConflictFilter{}); err != nil || len(p.Items) != 0 {
		t.Errorf("tenant B lists %v, %v", p.Items, err)
	}
	if _, err := b.op.Conflict(ctx, other, id, page.Items[0].ReceivedAt); !errors.Is(err, refusal.ErrNotFound) {
		t.Errorf("tenant B reads tenant A's conflict: %v, want ErrNotFound", err)
	}
	trail, err := b.op.Trail(ctx, nil, id)
	if err != nil {
		t.Fatal(err)
	}
	var outcomes []string
	for _, d := range trail.Deliveries {
		outcomes = append(outcomes, d.Outcome)
	}
	if len(outcomes) != 2 || outcomes[0] != "accepted" || outcomes[1] != "conflict" {
		t.Errorf("deliveries = %v, want accepted then conflict", outcomes)
	}
}
