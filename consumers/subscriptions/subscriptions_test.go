package subscriptions_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicehq/sluice/consumers"
	"github.com/sluicehq/sluice/consumers/subscriptions"
	"github.com/sluicehq/sluice/internal/testenv/consumertest"
)

func TestMain(m *testing.M) { os.Exit(consumertest.Main(m)) }

type step struct {
	id, typ, status string
	at              int64
	accepted        int64 // the inbox id: the order Sluice accepted the event in
}

func body(s step, subID, customer string) []byte {
	return fmt.Appendf(nil, `{"id":%q,"object":"event","type":%q,"created":%d,"data":{"object":{"id":%q,"object":"subscription","customer":%q,"status":%q}}}`,
		s.id, s.typ, s.at, subID, customer, s.status)
}

// Invariant 7: whatever the arrival order, the projection ends in the state
// of the newest version; ties go to the event accepted last (greater inbox
// id), whatever the Kafka order; a final state never regresses.
func TestShuffledAndReversedStreamsEndInTheNewestState(t *testing.T) {
	t.Parallel()
	env := consumertest.Shared(t)
	f := env.Tenant(t, "stripe")
	topic := env.Topic(t, "subscriptions", 3)
	base := time.Now().Add(-time.Hour).Unix()

	histories := map[string]struct {
		steps      []step
		wantStatus string
		wantEvent  string
	}{
		"ends canceled": {steps: []step{
			{"evt_a1", "customer.subscription.created", "incomplete", base, 1},
			{"evt_a2", "customer.subscription.updated", "active", base + 1, 2},
			{"evt_a3", "customer.subscription.updated", "past_due", base + 2, 3},
			{"evt_a4", "customer.subscription.updated", "active", base + 3, 4},
			{"evt_a5", "customer.subscription.deleted", "canceled", base + 4, 5},
		}, wantStatus: "canceled", wantEvent: "evt_a5"},
		// A late "active" with a newer time cannot reopen a canceled subscription.
		"final never regresses": {steps: []step{
			{"evt_b1", "customer.subscription.created", "active", base, 1},
			{"evt_b2", "customer.subscription.deleted", "canceled", base + 1, 2},
			{"evt_b3", "customer.subscription.updated", "active", base + 2, 3},
		}, wantStatus: "canceled", wantEvent: "evt_b2"},
		// Two events in the same second: the one Sluice accepted last wins,
		// always; their event ids say nothing (here the smaller id wins).
		"tie goes to the later accepted": {steps: []step{
			{"evt_c1", "customer.subscription.created", "trialing", base, 1},
			{"evt_c3", "customer.subscription.updated", "past_due", base + 1, 2},
			{"evt_c2", "customer.subscription.updated", "active", base + 1, 3},
		}, wantStatus: "active", wantEvent: "evt_c2"},
	}
	type object struct{ subID, wantStatus, wantEvent string }
	var objects []object
	var recs []*kgo.Record
	for name, h := range histories {
		for order, steps := range consumertest.Orders(h.steps) {
			subID := fmt.Sprintf("sub_%s_%d", f.Account, len(objects))
			objects = append(objects, object{subID, h.wantStatus, h.wantEvent})
			for _, s := range steps {
				ev := f.Event(s.id, "stripe."+s.typ, "subscription", subID, time.Unix(s.at, 0))
				ev.InboxID = fmt.Sprint(int64(len(objects))*10 + s.accepted)
				recs = append(recs, consumertest.Record(topic, ev, body(s, subID, f.Customer)))
			}
			t.Logf("%s, %s: %s", name, order, subID)
		}
	}
	env.Produce(t, recs...)
	g := env.Run(t, consumers.Config{Topics: []string{topic}}, subscriptions.Handler{}, nil)
	env.WaitCommitted(t, g.ID, time.Minute, recs...)

	for _, o := range objects {
		var status, event string
		var final bool
		err := env.Pool.QueryRow(context.Background(), `SELECT status, final, version_event_id FROM subscriptions
			WHERE source_id = $1 AND subscription_id = $2`, f.SourceID, o.subID).Scan(&status, &final, &event)
		if err != nil {
			t.Fatalf("%s: %v", o.subID, err)
		}
		if status != o.wantStatus || event != o.wantEvent {
			t.Errorf("%s: status %s from %s, want %s from %s", o.subID, status, event, o.wantStatus, o.wantEvent)
		}
		if final != (status == "canceled") {
			t.Errorf("%s: final = %v for %s", o.subID, final, status)
		}
	}
	if n := env.Count(t, `SELECT count(*) FROM dead_letters WHERE consumer_group = $1`, g.ID); n != 0 {
		t.Errorf("dead letters = %d, want 0", n)
	}
}
