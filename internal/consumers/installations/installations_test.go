package installations_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicehq/sluice/internal/consumers"
	"github.com/sluicehq/sluice/internal/consumers/consumertest"
	"github.com/sluicehq/sluice/internal/consumers/installations"
	"github.com/sluicehq/sluice/internal/envelope"
)

func TestMain(m *testing.M) { os.Exit(consumertest.Main(m)) }

type step struct {
	delivery, action string
	at               int // seconds after the history's start
}

// Invariant 7 for GitHub App installations.
func TestConformance(t *testing.T) {
	t.Parallel()
	base := time.Now().Add(-time.Hour).Truncate(time.Second)
	// The installation's id also names its account. updated_at is sent as
	// RFC 3339 here and as unix seconds in every other step, the two shapes
	// GitHub has used.
	record := func(f consumertest.Fixture, topic, id string, i int, s step) *kgo.Record {
		at := base.Add(time.Duration(s.at) * time.Second)
		updated := fmt.Sprintf("%q", at.UTC().Format(time.RFC3339))
		if i%2 == 1 {
			updated = fmt.Sprint(at.Unix())
		}
		body := fmt.Appendf(nil, `{"action":%q,"installation":{"id":%s,"account":{"id":%s,"login":"octo-%s","type":"Organization"},"updated_at":%s},"sender":{"login":"octocat"}}`,
			s.action, id, id, id, updated)
		return consumertest.Record(topic, f.Event(s.delivery+"-"+id, "github.installation."+s.action, "installation", id, time.Time{}), body)
	}
	consumertest.Conformance(t, consumertest.Suite{
		Kind: "github", Topic: installations.Topic, Features: consumertest.Features{AnyOrder: true},
		Handler: func(*consumertest.Env, envelope.Topics, string) consumers.Handler { return installations.Handler{} },
		Histories: []consumertest.History{
			consumertest.Steps("suspended last", "suspended", record, step{"d-a1", "created", 0}, step{"d-a2", "suspend", 1},
				step{"d-a3", "unsuspend", 2}, step{"d-a4", "suspend", 3}),
			consumertest.Steps("active last", "active", record, step{"d-b1", "created", 0}, step{"d-b2", "suspend", 1}, step{"d-b3", "unsuspend", 2}),
			// Deleted is final: a suspend with a newer time does not bring it back.
			consumertest.Steps("deleted is final", "deleted", record, step{"d-c1", "created", 0}, step{"d-c2", "deleted", 1}, step{"d-c3", "suspend", 2}),
		},
		State: func(tb testing.TB, env *consumertest.Env, f consumertest.Fixture, id string) string {
			var state, account string
			err := env.Pool.QueryRow(context.Background(), `SELECT state, account_id FROM github_installations
				WHERE source_id = $1 AND installation_id = $2`, f.SourceID, id).Scan(&state, &account)
			if err != nil {
				return err.Error()
			}
			if account != id {
				return state + " for account " + account
			}
			return state
		},
	})
}
