package operate_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/sluicehq/sluice/command/internal/operator/operate"
	"github.com/sluicehq/sluice/internal/consumers/offsets"
	"github.com/sluicehq/sluice/internal/store/inbox"
)

func operateTarget() offsets.Target { return offsets.Target{Earliest: true, Offset: -1} }

func subscriptionBody(id string) string {
	return fmt.Sprintf(`{"created":%d,"data":{"object":{"id":%q,"customer":"cus_1","status":"active"}}}`, time.Now().Unix(), id)
}

// A replay of a filtered set replays exactly the letters the filter
// selects (group, tenant and reason here), through the group's handler,
// and leaves every other letter pending.
func TestReplayOfAFilteredSetReplaysExactlyThoseLetters(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	now := time.Now().UTC()
	seeded := b.seed(t,
		row{b.tenantA, b.sourceA, "evt_1", "stripe.customer.subscription.updated", "sub_1", inbox.StatusPublished, now},
		row{b.tenantA, b.sourceA, "evt_2", "stripe.customer.subscription.updated", "sub_2", inbox.StatusPublished, now},
		row{b.tenantB, b.sourceB, "evt_3", "stripe.customer.subscription.updated", "sub_3", inbox.StatusPublished, now},
	)
	chosen := b.deadLetter(t, "subscriptions", b.tenantA, b.sourceA, "evt_1", seeded[0], subscriptionBody("sub_1"))
	var others []int64
	others = append(others, b.deadLetter(t, "subscriptions", b.tenantB, b.sourceB, "evt_3", seeded[2], subscriptionBody("sub_3")))
	others = append(others, b.deadLetter(t, "credits", b.tenantA, b.sourceA, "evt_1", seeded[0], subscriptionBody("sub_1")))
	other := b.deadLetter(t, "subscriptions", b.tenantA, b.sourceA, "evt_2", seeded[1], subscriptionBody("sub_2"))
	if _, err := b.pool.Exec(ctx, `UPDATE dead_letters SET reason = 'broker timeout' WHERE id = $1`, other); err != nil {
		t.Fatal(err)
	}
	others = append(others, other)

	res, err := b.op.ReplayDeadLetters(ctx, nil, operate.DeadLetterFilter{
		Group: b.topics.Resource("subscriptions"), TenantID: b.tenantA, Reason: "NO STATUS"}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Replayed, []int64{chosen}) {
		t.Errorf("replayed %v, want [%d]", res.Replayed, chosen)
	}
	var replayed []int64
	rows, _ := b.pool.Query(ctx, `SELECT id FROM dead_letters WHERE replayed_at IS NOT NULL ORDER BY id`)
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		replayed = append(replayed, id)
	}
	if !slices.Equal(replayed, []int64{chosen}) {
		t.Errorf("marked replayed %v, want [%d] (others: %v)", replayed, chosen, others)
	}
	var subs []string
	rows, _ = b.pool.Query(ctx, `SELECT subscription_id FROM subscriptions ORDER BY 1`)
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		subs = append(subs, s)
	}
	if !slices.Equal(subs, []string{"sub_1"}) {
		t.Errorf("projected %v, want [sub_1]", subs)
	}
	// The effect names the record the letter was.
	var topic string
	var offset int64
	if err := b.pool.QueryRow(ctx, `SELECT kafka_topic, kafka_offset FROM subscriptions WHERE subscription_id = 'sub_1'`).Scan(&topic, &offset); err != nil {
		t.Fatal(err)
	}
	if topic != b.topics.Resource("subscriptions") {
		t.Errorf("effect's topic = %q", topic)
	}

	page, err := b.op.DeadLetters(ctx, nil, operate.DeadLetterFilter{TenantID: b.tenantA})
	if err != nil {
		t.Fatal(err)
	}
	if got := len(page.Items); got != 2 {
		t.Errorf("tenant A's pending letters = %d, want 2", got)
	}
	if _, err := b.op.ReplayDeadLetters(ctx, nil, operate.DeadLetterFilter{}, slog.New(slog.DiscardHandler)); err == nil {
		t.Error("a replay with no filter ran")
	}
}

func errorsIsNotFound(err error) bool { return errors.Is(err, operate.ErrNotFound) }
