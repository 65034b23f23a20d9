package verifications_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicehq/sluice/internal/consumers"
	"github.com/sluicehq/sluice/internal/consumers/consumertest"
	"github.com/sluicehq/sluice/internal/consumers/verifications"
	"github.com/sluicehq/sluice/internal/envelope"
)

func TestMain(m *testing.M) { os.Exit(consumertest.Main(m)) }

type step struct {
	id, status string
	at         int // seconds after the history's start
}

// Invariant 7 for identity verifications, with the terminal rule: once
// approved or rejected, a verification never changes, even for a late
// "pending" carrying a newer timestamp.
func TestConformance(t *testing.T) {
	t.Parallel()
	base := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	record := func(f consumertest.Fixture, topic, id string, _ int, s step) *kgo.Record {
		at := base.Add(time.Duration(s.at) * time.Second)
		typ := "verification." + s.status
		body := fmt.Appendf(nil, `{"type":%q,"timestamp":%q,"data":{"id":%q}}`, typ, at.Format(time.RFC3339Nano), id)
		return consumertest.Record(topic, f.Event(s.id, "standard_webhooks."+typ, "verification", id, at), body)
	}
	consumertest.Conformance(t, consumertest.Suite{
		Kind: "standard_webhooks", Topic: verifications.Topic, Features: consumertest.Features{AnyOrder: true},
		Handler: func(*consumertest.Env, envelope.Topics, string) consumers.Handler { return verifications.Handler{} },
		Histories: []consumertest.History{
			consumertest.Steps("approved", "approved from msg_a3", record, step{"msg_a1", "pending", 0}, step{"msg_a2", "in_review", 1}, step{"msg_a3", "approved", 2}),
			consumertest.Steps("rejected", "rejected from msg_b3", record, step{"msg_b1", "pending", 0}, step{"msg_b2", "in_review", 1}, step{"msg_b3", "rejected", 2}),
			consumertest.Steps("still in review", "in_review from msg_c2", record, step{"msg_c1", "pending", 0}, step{"msg_c2", "in_review", 1}),
			consumertest.Steps("late pending after the decision", "approved from msg_d2", record,
				step{"msg_d1", "pending", 0}, step{"msg_d2", "approved", 1}, step{"msg_d3", "pending", 5}),
			consumertest.Steps("two decisions: the earlier stands", "rejected from msg_e2", record,
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
