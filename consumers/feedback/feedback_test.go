package feedback_test

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicehq/sluice/consumers"
	"github.com/sluicehq/sluice/consumers/feedback"
	"github.com/sluicehq/sluice/internal/envelope"
	"github.com/sluicehq/sluice/internal/testenv/consumertest"
)

func TestMain(m *testing.M) { os.Exit(consumertest.Main(m)) }

func event(f consumertest.Fixture, topic, msgID, typ, feedbackID, extra string) *kgo.Record {
	at := time.Now()
	body := fmt.Appendf(nil, `{"type":%q,"timestamp":%q,"data":{"id":%q,"project_id":"proj_1"%s}}`, typ, at.Format(time.RFC3339), feedbackID, extra)
	return consumertest.Record(topic, f.Event(msgID, "standard_webhooks."+typ, "feedback", feedbackID, at), body)
}

// One initial alert per feedback however many events announce it (new
// webhook ids included); each escalation level is its own operation.
func TestOneAlertPerOperation(t *testing.T) {
	t.Parallel()
	env := consumertest.Shared(t)
	f := env.Tenant(t, "standard_webhooks")
	topic := env.Topic(t, "feedback", 3)
	topics := envelope.Topics{Prefix: topic}
	recs := env.Produce(t,
		event(f, topic, "msg_1", "feedback.created", "fb_1", ""),
		event(f, topic, "msg_1", "feedback.created", "fb_1", ""), // redelivered
		event(f, topic, "msg_2", "feedback.created", "fb_1", ""), // same feedback, another webhook id
		event(f, topic, "msg_3", "feedback.escalated", "fb_1", ""),
		event(f, topic, "msg_4", "feedback.escalated", "fb_1", `,"level":1`),
		event(f, topic, "msg_5", "feedback.escalated", "fb_1", `,"level":2`),
		event(f, topic, "msg_6", "feedback.created", "fb_2", ""),
	)
	g := env.Run(t, consumers.Config{Topics: []string{topic}}, feedback.Handler{Topics: topics}, nil)
	env.WaitCommitted(t, g.ID, time.Minute, recs...)

	for _, c := range []struct {
		feedbackID, operation string
	}{{"fb_1", feedback.InitialAlert}, {"fb_1", "escalation-1"}, {"fb_1", "escalation-2"}, {"fb_2", feedback.InitialAlert}} {
		if n := env.Count(t, `SELECT count(*) FROM feedback_alerts WHERE tenant_id = $1 AND feedback_id = $2 AND operation = $3`,
			f.TenantID, c.feedbackID, c.operation); n != 1 {
			t.Errorf("%s %s: %d alerts, want 1", c.feedbackID, c.operation, n)
		}
	}
	if n := env.Count(t, `SELECT count(*) FROM outbox WHERE topic = $1 AND headers->>'ce_tenantid' = $2`,
		topics.Resource("notifications"), f.TenantID); n != 4 {
		t.Errorf("alert intents = %d, want 4", n)
	}
}
