package feedback_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicehq/sluice/internal/consumers"
	"github.com/sluicehq/sluice/internal/consumers/consumertest"
	"github.com/sluicehq/sluice/internal/consumers/feedback"
	"github.com/sluicehq/sluice/internal/envelope"
)

func TestMain(m *testing.M) { os.Exit(consumertest.Main(m)) }

type step struct{ msgID, typ, extra string }

// event is a step's record about the feedback.
func event(f consumertest.Fixture, topic, feedbackID string, _ int, s step) *kgo.Record {
	at := time.Now()
	body := fmt.Appendf(nil, `{"type":%q,"timestamp":%q,"data":{"id":%q,"project_id":"proj_1"%s}}`, s.typ, at.Format(time.RFC3339), feedbackID, s.extra)
	return consumertest.Record(topic, f.Event(s.msgID, "standard_webhooks."+s.typ, "feedback", feedbackID, at), body)
}

// Invariant 3: one initial alert per feedback however many events announce
// it (new webhook ids included); each escalation level is its own
// operation; every alert has one intent.
func TestConformance(t *testing.T) {
	t.Parallel()
	consumertest.Conformance(t, consumertest.Suite{
		Kind: "standard_webhooks", Topic: feedback.Topic, Features: consumertest.Features{AnyOrder: true},
		Handler: func(_ *consumertest.Env, topics envelope.Topics, _ string) consumers.Handler {
			return feedback.Handler{Topics: topics}
		},
		Histories: []consumertest.History{
			consumertest.Steps("created once", "initial-alert; 1 intent", event, step{"msg_1", "feedback.created", ""}),
			consumertest.Steps("created and escalated", "escalation-1 escalation-2 initial-alert; 3 intents", event,
				step{"msg_1", "feedback.created", ""},
				step{"msg_2", "feedback.created", ""}, // same feedback, another webhook id
				step{"msg_3", "feedback.escalated", ""},
				step{"msg_4", "feedback.escalated", `,"level":1`},
				step{"msg_5", "feedback.escalated", `,"level":2`}),
		},
		State: func(tb testing.TB, env *consumertest.Env, f consumertest.Fixture, feedbackID string) string {
			rows, _ := env.Pool.Query(context.Background(), `SELECT operation FROM feedback_alerts
				WHERE tenant_id = $1 AND feedback_id = $2 ORDER BY operation`, f.TenantID, feedbackID)
			ops, err := pgx.CollectRows(rows, pgx.RowTo[string])
			if err != nil {
				return err.Error()
			}
			intents := env.Count(tb, `SELECT count(*) FROM outbox WHERE headers->>'ce_tenantid' = $1
				AND headers->>'ce_type' = 'sluice.alert.feedback' AND headers->>'ce_subject' = $2`, f.TenantID, feedbackID)
			return fmt.Sprintf("%s; %d intent%s", strings.Join(ops, " "), intents, map[bool]string{true: "s"}[intents != 1])
		},
	})
}
