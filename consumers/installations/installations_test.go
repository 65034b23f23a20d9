package installations_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicehq/sluice/consumers"
	"github.com/sluicehq/sluice/consumers/installations"
	"github.com/sluicehq/sluice/internal/testenv/consumertest"
)

func TestMain(m *testing.M) { os.Exit(consumertest.Main(m)) }

type step struct {
	delivery, action string
	at               time.Time
}

// updated_at is sent as RFC 3339 here and as unix seconds in every other
// step, the two shapes GitHub has used.
func body(s step, i int, installationID, accountID int64) []byte {
	updated := fmt.Sprintf("%q", s.at.UTC().Format(time.RFC3339))
	if i%2 == 1 {
		updated = fmt.Sprint(s.at.Unix())
	}
	return fmt.Appendf(nil, `{"action":%q,"installation":{"id":%d,"account":{"id":%d,"login":"octo-%d","type":"Organization"},"updated_at":%s},"sender":{"login":"octocat"}}`,
		s.action, installationID, accountID, accountID, updated)
}

// Invariant 7 for GitHub App installations.
func TestShuffledAndReversedStreamsEndInTheNewestState(t *testing.T) {
	t.Parallel()
	env := consumertest.Shared(t)
	f := env.Tenant(t, "github")
	topic := env.Topic(t, "github", 3)
	base := time.Now().Add(-time.Hour).Truncate(time.Second)
	at := func(s int) time.Time { return base.Add(time.Duration(s) * time.Second) }

	histories := map[string]struct {
		steps     []step
		wantState string
	}{
		"suspended last": {steps: []step{
			{"d-a1", "created", at(0)}, {"d-a2", "suspend", at(1)}, {"d-a3", "unsuspend", at(2)}, {"d-a4", "suspend", at(3)},
		}, wantState: "suspended"},
		"active last": {steps: []step{
			{"d-b1", "created", at(0)}, {"d-b2", "suspend", at(1)}, {"d-b3", "unsuspend", at(2)},
		}, wantState: "active"},
		// Deleted is final: a suspend with a newer time does not bring it back.
		"deleted is final": {steps: []step{
			{"d-c1", "created", at(0)}, {"d-c2", "deleted", at(1)}, {"d-c3", "suspend", at(2)},
		}, wantState: "deleted"},
	}
	type object struct {
		id        int64
		wantState string
	}
	var objects []object
	var recs []*kgo.Record
	next := time.Now().UnixNano() % 1e9
	for _, h := range histories {
		for _, steps := range consumertest.Orders(h.steps) {
			next++
			objects = append(objects, object{next, h.wantState})
			for i, s := range steps {
				id := fmt.Sprint(next)
				ev := f.Event(s.delivery+"-"+id, "github.installation."+s.action, "installation", id, time.Time{})
				recs = append(recs, consumertest.Record(topic, ev, body(s, i, next, next+7)))
			}
		}
	}
	env.Produce(t, recs...)
	g := env.Run(t, consumers.Config{Topics: []string{topic}}, installations.Handler{}, nil)
	env.WaitCommitted(t, g.ID, time.Minute, recs...)

	for _, o := range objects {
		var state, account string
		err := env.Pool.QueryRow(context.Background(), `SELECT state, account_id FROM github_installations
			WHERE source_id = $1 AND installation_id = $2`, f.SourceID, fmt.Sprint(o.id)).Scan(&state, &account)
		if err != nil {
			t.Fatalf("installation %d: %v", o.id, err)
		}
		if state != o.wantState || account != fmt.Sprint(o.id+7) {
			t.Errorf("installation %d: %s for account %s, want %s", o.id, state, account, o.wantState)
		}
	}
	if n := env.Count(t, `SELECT count(*) FROM dead_letters WHERE consumer_group = $1`, g.ID); n != 0 {
		t.Errorf("dead letters = %d, want 0", n)
	}
}
