package feedback_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sluicehq/sluice/command/internal/effects/feedback"
	"github.com/sluicehq/sluice/effect/effecttest"
)

func TestMain(m *testing.M) { os.Exit(effecttest.Main(m)) }

type step struct{ msgID, typ, extra string }

// history is what happens to a feedback, step by step.
func history(name, final string, steps ...step) effecttest.History {
	return effecttest.History{Name: name, Final: final, Events: func(_ effecttest.Fixture, feedbackID string) []effecttest.Event {
		evs := make([]effecttest.Event, len(steps))
		for i, s := range steps {
			at := time.Now()
			evs[i] = effecttest.Event{ID: s.msgID, Type: "standard_webhooks." + s.typ, ObjectType: "feedback", Time: at,
				Body: fmt.Appendf(nil, `{"type":%q,"timestamp":%q,"data":{"id":%q,"project_id":"proj_1"%s}}`, s.typ, at.Format(time.RFC3339), feedbackID, s.extra)}
		}
		return evs
	}}
}

// Invariant 3: one initial alert per feedback however many events announce
// it (new webhook ids included); each escalation level is its own
// operation; every alert has one intent.
func TestKitScenarios(t *testing.T) {
	t.Parallel()
	effecttest.Run(t, effecttest.Suite{
		Group: feedback.Group(), Kind: "standard_webhooks", AnyOrder: true,
		Histories: []effecttest.History{
			history("created once", "initial-alert; 1 intent", step{"msg_1", "feedback.created", ""}),
			history("created and escalated", "escalation-1 escalation-2 initial-alert; 3 intents",
				step{"msg_1", "feedback.created", ""},
				step{"msg_2", "feedback.created", ""}, // same feedback, another webhook id
				step{"msg_3", "feedback.escalated", ""},
				step{"msg_4", "feedback.escalated", `,"level":1`},
				step{"msg_5", "feedback.escalated", `,"level":2`}),
		},
		State: func(tb testing.TB, f effecttest.Fixture, feedbackID string) string {
			rows, _ := f.DB.Query(context.Background(), `SELECT operation FROM feedback_alerts
				WHERE tenant_id = $1 AND feedback_id = $2 ORDER BY operation`, f.TenantID, feedbackID)
			ops, err := pgx.CollectRows(rows, pgx.RowTo[string])
			if err != nil {
				return err.Error()
			}
			var intents int
			if err := f.DB.QueryRow(context.Background(), `SELECT count(*) FROM outbox WHERE headers->>'ce_tenantid' = $1
				AND headers->>'ce_type' = 'sluice.alert.feedback' AND headers->>'ce_subject' = $2`, f.TenantID, feedbackID).Scan(&intents); err != nil {
				return err.Error()
			}
			return fmt.Sprintf("%s; %d intent%s", strings.Join(ops, " "), intents, map[bool]string{true: "s"}[intents != 1])
		},
	})
}
