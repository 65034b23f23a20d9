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
	"github.com/sluicehq/sluice/internal/testenv/consumertest"
)

func TestMain(m *testing.M) { os.Exit(consumertest.Main(m)) }

type step struct {
	id, status string
	at         int
}

// Invariant 7 for identity verifications, with the terminal rule: once
// approved or rejected, a verification never changes, even for a late
// "pending" carrying a newer timestamp.
func TestShuffledAndReversedStreamsEndInTheNewestState(t *testing.T) {
	t.Parallel()
	env := consumertest.Shared(t)
	f := env.Tenant(t, "standard_webhooks")
	topic := env.Topic(t, "verifications", 3)
	base := time.Now().Add(-time.Hour).Truncate(time.Millisecond)

	histories := map[string]struct {
		steps      []step
		wantStatus string
		wantEvent  string
	}{
		"approved": {steps: []step{{"msg_a1", "pending", 0}, {"msg_a2", "in_review", 1}, {"msg_a3", "approved", 2}},
			wantStatus: "approved", wantEvent: "msg_a3"},
		"rejected": {steps: []step{{"msg_b1", "pending", 0}, {"msg_b2", "in_review", 1}, {"msg_b3", "rejected", 2}},
			wantStatus: "rejected", wantEvent: "msg_b3"},
		"still in review": {steps: []step{{"msg_c1", "pending", 0}, {"msg_c2", "in_review", 1}},
			wantStatus: "in_review", wantEvent: "msg_c2"},
		"late pending after the decision": {steps: []step{{"msg_d1", "pending", 0}, {"msg_d2", "approved", 1}, {"msg_d3", "pending", 5}},
			wantStatus: "approved", wantEvent: "msg_d2"},
		"two decisions: the earlier stands": {steps: []step{{"msg_e1", "in_review", 0}, {"msg_e2", "rejected", 1}, {"msg_e3", "approved", 2}},
			wantStatus: "rejected", wantEvent: "msg_e2"},
	}
	type object struct{ id, wantStatus, wantEvent string }
	var objects []object
	var recs []*kgo.Record
	for _, h := range histories {
		for _, steps := range consumertest.Orders(h.steps) {
			vid := fmt.Sprintf("ver_%s_%d", f.Account, len(objects))
			objects = append(objects, object{vid, h.wantStatus, h.wantEvent})
			for _, s := range steps {
				at := base.Add(time.Duration(s.at) * time.Second)
				typ := "verification." + s.status
				ev := f.Event(s.id, "standard_webhooks."+typ, "verification", vid, at)
				b := fmt.Appendf(nil, `{"type":%q,"timestamp":%q,"data":{"id":%q}}`, typ, at.Format(time.RFC3339Nano), vid)
				recs = append(recs, consumertest.Record(topic, ev, b))
			}
		}
	}
	env.Produce(t, recs...)
	g := env.Run(t, consumers.Config{Topics: []string{topic}}, verifications.Handler{}, nil)
	env.WaitCommitted(t, g.ID, time.Minute, recs...)

	for _, o := range objects {
		var status, event string
		err := env.Pool.QueryRow(context.Background(), `SELECT status, version_event_id FROM verifications
			WHERE source_id = $1 AND verification_id = $2`, f.SourceID, o.id).Scan(&status, &event)
		if err != nil {
			t.Fatalf("%s: %v", o.id, err)
		}
		if status != o.wantStatus || event != o.wantEvent {
			t.Errorf("%s: %s from %s, want %s from %s", o.id, status, event, o.wantStatus, o.wantEvent)
		}
	}
}
