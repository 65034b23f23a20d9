package subscriptions_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicehq/sluice/internal/consumers"
	"github.com/sluicehq/sluice/internal/consumers/consumertest"
	"github.com/sluicehq/sluice/internal/consumers/subscriptions"
	"github.com/sluicehq/sluice/internal/envelope"
)

func TestMain(m *testing.M) { os.Exit(consumertest.Main(m)) }

type step struct {
	id, typ, status string
	at              int64 // seconds after the history's start
}

// Invariant 7: whatever the arrival order, the projection ends in the state
// of the newest version; ties go to the event accepted last (greater inbox
// id), whatever the Kafka order; a final state never regresses.
func TestConformance(t *testing.T) {
	t.Parallel()
	base := time.Now().Add(-time.Hour).Unix()
	// Steps are given in the order Sluice accepted them: their inbox ids
	// follow it, whatever Kafka's order.
	record := func(f consumertest.Fixture, topic, subID string, accepted int, s step) *kgo.Record {
		ev := f.Event(s.id, "stripe."+s.typ, "subscription", subID, time.Unix(base+s.at, 0))
		ev.InboxID = fmt.Sprint(accepted + 1)
		body := fmt.Appendf(nil, `{"id":%q,"object":"event","type":%q,"created":%d,"data":{"object":{"id":%q,"object":"subscription","customer":%q,"status":%q}}}`,
			s.id, s.typ, base+s.at, subID, f.Customer, s.status)
		return consumertest.Record(topic, ev, body)
	}
	consumertest.Conformance(t, consumertest.Suite{
		Kind: "stripe", Topic: subscriptions.Topic, Features: consumertest.Features{AnyOrder: true},
		Handler: func(*consumertest.Env, envelope.Topics, string) consumers.Handler { return subscriptions.Handler{} },
		Histories: []consumertest.History{
			consumertest.Steps("ends canceled", "canceled final from evt_a5", record,
				step{"evt_a1", "customer.subscription.created", "incomplete", 0},
				step{"evt_a2", "customer.subscription.updated", "active", 1},
				step{"evt_a3", "customer.subscription.updated", "past_due", 2},
				step{"evt_a4", "customer.subscription.updated", "active", 3},
				step{"evt_a5", "customer.subscription.deleted", "canceled", 4}),
			// A late "active" with a newer time cannot reopen a canceled subscription.
			consumertest.Steps("final never regresses", "canceled final from evt_b2", record,
				step{"evt_b1", "customer.subscription.created", "active", 0},
				step{"evt_b2", "customer.subscription.deleted", "canceled", 1},
				step{"evt_b3", "customer.subscription.updated", "active", 2}),
			// Two events in the same second: the one Sluice accepted last
			// wins, always; their event ids say nothing (here the smaller
			// id wins).
			consumertest.Steps("tie goes to the later accepted", "active from evt_c2", record,
				step{"evt_c1", "customer.subscription.created", "trialing", 0},
				step{"evt_c3", "customer.subscription.updated", "past_due", 1},
				step{"evt_c2", "customer.subscription.updated", "active", 1}),
		},
		State: func(tb testing.TB, env *consumertest.Env, f consumertest.Fixture, subID string) string {
			var status, event string
			var final bool
			err := env.Pool.QueryRow(context.Background(), `SELECT status, final, version_event_id FROM subscriptions
				WHERE source_id = $1 AND subscription_id = $2`, f.SourceID, subID).Scan(&status, &final, &event)
			if err != nil {
				return err.Error()
			}
			if final {
				status += " final"
			}
			return status + " from " + event
		},
	})
}
