package verifications_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicehq/sluice/consumers"
	"github.com/sluicehq/sluice/consumers/verifications"
	"github.com/sluicehq/sluice/internal/envelope"
	"github.com/sluicehq/sluice/internal/testenv/consumertest"
)

func TestMain(m *testing.M) { os.Exit(consumertest.Main(m)) }

type step struct {
	id, status string
	at         int // seconds after the history's start
}

func history(name, final string, steps ...step) consumertest.History {
	base := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	return consumertest.History{Name: name, Final: final, Events: func(f consumertest.Fixture, topic, id string) []*kgo.Record {
		var recs []*kgo.Record
		for _, s := range steps {
			at := base.Add(time.Duration(s.at) * time.Second)
			typ := "verification." + s.status
			ev := f.Event(s.id, "standard_webhooks."+typ, "verification", id, at)
			body := fmt.Appendf(nil, `{"type":%q,"timestamp":%q,"data":{"id":%q}}`, typ, at.Format(time.RFC3339Nano), id)
			recs = append(recs, consumertest.Record(topic, ev, body))
		}
		return recs
	}}
}

// Invariant 7 for identity verifications, with the terminal rule: once
// approved or rejected, a verification never changes, even for a late
// "pending" carrying a newer timestamp.
func TestConformance(t *testing.T) {
	t.Parallel()
	consumertest.Conformance(t, consumertest.Suite{
		Kind: "standard_webhooks", Topic: verifications.Topic, Features: consumertest.Features{AnyOrder: true},
		Handler: func(*consumertest.Env, envelope.Topics, string) consumers.Handler { return verifications.Handler{} },
		Histories: []consumertest.History{
			history("approved", "approved from msg_a3", step{"msg_a1", "pending", 0}, step{"msg_a2", "in_review", 1}, step{"msg_a3", "approved", 2}),
			history("rejected", "rejected from msg_b3", step{"msg_b1", "pending", 0}, step{"msg_b2", "in_review", 1}, step{"msg_b3", "rejected", 2}),
			history("still in review", "in_review from msg_c2", step{"msg_c1", "pending", 0}, step{"msg_c2", "in_review", 1}),
			history("late pending after the decision", "approved from msg_d2",
				step{"msg_d1", "pending", 0}, step{"msg_d2", "approved", 1}, step{"msg_d3", "pending", 5}),
			history("two decisions: the earlier stands", "rejected from msg_e2",
				step{"msg_e1", "in_review", 0}, step{"msg_e2", "rejected", 1}, step{"msg_e3", "approved", 2}),
		},
		State: func(tb testing.TB, env *consumertest.Env, f consumertest.Fixture, id string) string {
			var status, event string
			err := env.Pool.QueryRow(context.Background(), `SELECT status, version_event_id FROM verifications
				WHERE source_id = $1 AND verification_id = $2`, f.SourceID, id).Scan(&status, &event)
			if err != nil {
				return err.Error()
			}
			return status + " from " + event
		},
	})
}
