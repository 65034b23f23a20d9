package subscriptions_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/sluicehq/sluice/command/internal/effects/subscriptions"
	"github.com/sluicehq/sluice/effect/effecttest"
)

func TestMain(m *testing.M) { os.Exit(effecttest.Main(m)) }

type step struct {
	id, typ, status string
	at              int64 // seconds after the history's start
}

// Invariant 7: whatever the arrival order, the projection ends in the state
// of the newest version; ties go to the event accepted last (greater inbox
// id), whatever the Kafka order; a final state never regresses.
func TestKitScenarios(t *testing.T) {
	t.Parallel()
	base := time.Now().Add(-time.Hour).Unix()
	// Steps are given in the order Sluice accepted them: their inbox ids
	// follow it, whatever Kafka's order.
	history := func(name, final string, steps ...step) effecttest.History {
		return effecttest.History{Name: name, Final: final, Events: func(f effecttest.Fixture, subID string) []effecttest.Event {
			evs := make([]effecttest.Event, len(steps))
			for i, s := range steps {
				evs[i] = effecttest.Event{ID: s.id, Type: "stripe." + s.typ, ObjectType: "subscription", Time: time.Unix(base+s.at, 0),
					Body: fmt.Appendf(nil, `{"id":%q,"object":"event","type":%q,"created":%d,"data":{"object":{"id":%q,"object":"subscription","customer":%q,"status":%q}}}`,
						s.id, s.typ, base+s.at, subID, f.Customer, s.status)}
			}
			return evs
		}}
	}
	effecttest.Run(t, effecttest.Suite{
		Group: subscriptions.Group(), Kind: "stripe", AnyOrder: true,
		Histories: []effecttest.History{
			history("ends canceled", "canceled final from evt_a5",
				step{"evt_a1", "customer.subscription.created", "incomplete", 0},
				step{"evt_a2", "customer.subscription.updated", "active", 1},
				step{"evt_a3", "customer.subscription.updated", "past_due", 2},
				step{"evt_a4", "customer.subscription.updated", "active", 3},
				step{"evt_a5", "customer.subscription.deleted", "canceled", 4}),
			// A late "active" with a newer time cannot reopen a canceled subscription.
			history("final never regresses", "canceled final from evt_b2",
				step{"evt_b1", "customer.subscription.created", "active", 0},
				step{"evt_b2", "customer.subscription.deleted", "canceled", 1},
				step{"evt_b3", "customer.subscription.updated", "active", 2}),
			// Two events in the same second: the one Sluice accepted last
			// wins, always; their event ids say nothing (here the smaller
			// id wins).
			history("tie goes to the later accepted", "active from evt_c2",
				step{"evt_c1", "customer.subscription.created", "trialing", 0},
				step{"evt_c3", "customer.subscription.updated", "past_due", 1},
				step{"evt_c2", "customer.subscription.updated", "active", 1}),
		},
		State: func(tb testing.TB, f effecttest.Fixture, subID string) string {
			var status, event string
			var final bool
			err := f.DB.QueryRow(context.Background(), `SELECT status, final, version_event_id FROM subscriptions
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
