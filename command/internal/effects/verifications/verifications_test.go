package verifications_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/sluicehq/sluice/command/internal/effects/verifications"
	"github.com/sluicehq/sluice/effect/effecttest"
)

func TestMain(m *testing.M) { os.Exit(effecttest.Main(m)) }

type step struct {
	id, status string
	at         int // seconds after the history's start
}

// Invariant 7 for identity verifications, with the terminal rule: once
// approved or rejected, a verification never changes, even for a late
// "pending" carrying a newer timestamp.
func TestKitScenarios(t *testing.T) {
	t.Parallel()
	base := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	history := func(name, final string, steps ...step) effecttest.History {
		return effecttest.History{Name: name, Final: final, Events: func(_ effecttest.Fixture, id string) []effecttest.Event {
			evs := make([]effecttest.Event, len(steps))
			for i, s := range steps {
				at := base.Add(time.Duration(s.at) * time.Second)
				typ := "verification." + s.status
				evs[i] = effecttest.Event{ID: s.id, Type: "standard_webhooks." + typ, ObjectType: "verification", Time: at,
					Body: fmt.Appendf(nil, `{"type":%q,"timestamp":%q,"data":{"id":%q}}`, typ, at.Format(time.RFC3339Nano), id)}
			}
			return evs
		}}
	}
	effecttest.Run(t, effecttest.Suite{
		Group: verifications.Group(), Kind: "standard_webhooks", AnyOrder: true,
		Histories: []effecttest.History{
			history("approved", "approved from msg_a3", step{"msg_a1", "pending", 0}, step{"msg_a2", "in_review", 1}, step{"msg_a3", "approved", 2}),
			history("rejected", "rejected from msg_b3", step{"msg_b1", "pending", 0}, step{"msg_b2", "in_review", 1}, step{"msg_b3", "rejected", 2}),
			history("still in review", "in_review from msg_c2", step{"msg_c1", "pending", 0}, step{"msg_c2", "in_review", 1}),
			history("late pending after the decision", "approved from msg_d2",
				step{"msg_d1", "pending", 0}, step{"msg_d2", "approved", 1}, step{"msg_d3", "pending", 5}),
			history("two decisions: the earlier stands", "rejected from msg_e2",
				step{"msg_e1", "in_review", 0}, step{"msg_e2", "rejected", 1}, step{"msg_e3", "approved", 2}),
		},
		State: func(tb testing.TB, f effecttest.Fixture, id string) string {
			var status, event string
			err := f.DB.QueryRow(context.Background(), `SELECT status, version_event_id FROM verifications
				WHERE source_id = $1 AND verification_id = $2`, f.SourceID, id).Scan(&status, &event)
			if err != nil {
				return err.Error()
			}
			return status + " from " + event
		},
	})
}
