package operate_test

import (
	"context"
	"testing"
	"time"

	"github.com/sluicehq/sluice/command/internal/operator/operate"
	"github.com/sluicehq/sluice/internal/store/inbox"
)

// The overview counts each minute of the last hour by status, per tenant
// when scoped; a later overview counts what arrived since, while the
// minutes settled before it are served from the process and not read again
// (a row written into one afterwards is not counted: the figures are
// sampled).
func TestOverviewCountsMinutesAndKeepsSettledOnes(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	now := time.Now().UTC()
	old, recent := now.Add(-40*time.Minute), now.Add(-10*time.Second)
	b.seed(t,
		row{b.tenantA, b.sourceA, "evt_gone", "stripe.invoice.paid", "in_0", inbox.StatusPublished, now.Add(-2 * time.Hour)},
		row{b.tenantA, b.sourceA, "evt_1", "stripe.invoice.paid", "in_1", inbox.StatusPublished, old},
		row{b.tenantA, b.sourceA, "evt_2", "stripe.invoice.paid", "in_2", inbox.StatusQuarantined, old},
		row{b.tenantB, b.sourceB, "evt_3", "stripe.invoice.paid", "in_3", inbox.StatusPublished, old},
		row{b.tenantA, b.sourceA, "evt_4", "stripe.invoice.paid", "in_4", inbox.StatusPublished, recent},
	)
	want := func(ov operate.Overview, accepted int64, minutes map[time.Time]map[inbox.Status]int64) {
		t.Helper()
		got := map[time.Time]map[inbox.Status]int64{}
		for _, m := range ov.Minutes {
			got[m.Minute] = m.ByStatus
		}
		if ov.Accepted != accepted || len(got) != len(minutes) {
			t.Fatalf("accepted %d in %+v, want %d in %v", ov.Accepted, ov.Minutes, accepted, minutes)
		}
		for m, by := range minutes {
			for s, n := range by {
				if got[m][s] != n {
					t.Errorf("minute %s %s: %d, want %d (all: %+v)", m, s, got[m][s], n, ov.Minutes)
				}
			}
		}
	}
	oldMin, recentMin := old.Truncate(time.Minute), recent.Truncate(time.Minute)
	ov, err := b.op.Overview(ctx, nil, now)
	if err != nil {
		t.Fatal(err)
	}
	want(ov, 4, map[time.Time]map[inbox.Status]int64{
		oldMin:    {inbox.StatusPublished: 2, inbox.StatusQuarantined: 1},
		recentMin: {inbox.StatusPublished: 1},
	})
	scopeA := &operate.Scope{TenantID: b.tenantA}
	if ov, err = b.op.Overview(ctx, scopeA, now); err != nil {
		t.Fatal(err)
	}
	want(ov, 3, map[time.Time]map[inbox.Status]int64{
		oldMin:    {inbox.StatusPublished: 1, inbox.StatusQuarantined: 1},
		recentMin: {inbox.StatusPublished: 1},
	})

	b.seed(t,
		row{b.tenantA, b.sourceA, "evt_5", "stripe.invoice.paid", "in_5", inbox.StatusPublished, recent},
		row{b.tenantA, b.sourceA, "evt_late", "stripe.invoice.paid", "in_6", inbox.StatusPublished, old},
	)
	later := now.Add(time.Second)
	if ov, err = b.op.Overview(ctx, scopeA, later); err != nil {
		t.Fatal(err)
	}
	want(ov, 4, map[time.Time]map[inbox.Status]int64{
		oldMin:    {inbox.StatusPublished: 1, inbox.StatusQuarantined: 1},
		recentMin: {inbox.StatusPublished: 2},
	})
	// A fresh process reads the whole window again and sees the late row.
	fresh := operate.New(b.pool, nil, operate.Config{})
	if ov, err = fresh.Overview(ctx, scopeA, later); err != nil {
		t.Fatal(err)
	}
	want(ov, 5, map[time.Time]map[inbox.Status]int64{
		oldMin:    {inbox.StatusPublished: 2, inbox.StatusQuarantined: 1},
		recentMin: {inbox.StatusPublished: 2},
	})
}
