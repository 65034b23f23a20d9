package operate_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/sluicehq/sluice/command/internal/operator/operate"
	"github.com/sluicehq/sluice/internal/store/inbox"
)

// A search that names nothing lists every tenant's rows newest first by
// id (not by received_at), a page at a time, without losing or repeating a row; a scoped caller
// naming nothing sees its own tenant's rows only.
func TestSearchNamingNothingListsTheNewestByID(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	now := time.Now().UTC()
	seeded := b.seed(t,
		row{b.tenantA, b.sourceA, "evt_1", "stripe.invoice.paid", "in_1", inbox.StatusPublished, now.Add(-3 * time.Hour)},
		row{b.tenantB, b.sourceB, "evt_2", "stripe.invoice.paid", "in_2", inbox.StatusPublished, now.Add(-2 * time.Hour)},
		row{b.tenantA, b.sourceA, "evt_3", "stripe.invoice.paid", "in_3", inbox.StatusQuarantined, now.Add(-time.Minute)},
		row{b.tenantB, b.sourceB, "evt_4", "stripe.invoice.paid", "in_4", inbox.StatusPublished, now},
		// Written last, received earlier (a transaction that began
		// before the others): its id, not its time, places it.
		row{b.tenantA, b.sourceA, "evt_5", "stripe.invoice.paid", "in_5", inbox.StatusPublished, now.Add(-90 * time.Minute)},
	)
	var paged []int64
	f := operate.SearchFilter{Limit: 2}
	for range 10 {
		p, err := b.op.Search(ctx, nil, f)
		if err != nil {
			t.Fatal(err)
		}
		paged = append(paged, ids(p.Items)...)
		if p.Next == "" {
			break
		}
		f.After = p.Next
	}
	want := slices.Clone(seeded)
	slices.Reverse(want)
	if !slices.Equal(paged, want) {
		t.Errorf("paged ids = %v, want every row newest first %v", paged, want)
	}
	p, err := b.op.Search(ctx, &operate.Scope{TenantID: b.tenantB}, operate.SearchFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(p.Items); !slices.Equal(got, []int64{seeded[3], seeded[1]}) {
		t.Errorf("tenant B's newest = %v, want %v", got, []int64{seeded[3], seeded[1]})
	}
}
