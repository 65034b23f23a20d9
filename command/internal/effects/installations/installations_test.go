package installations_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/sluicehq/sluice/command/internal/effects/installations"
	"github.com/sluicehq/sluice/effect/effecttest"
)

func TestMain(m *testing.M) { os.Exit(effecttest.Main(m)) }

type step struct {
	delivery, action string
	at               int // seconds after the history's start
}

// Invariant 7 for GitHub App installations.
func TestKitScenarios(t *testing.T) {
	t.Parallel()
	base := time.Now().Add(-time.Hour).Truncate(time.Second)
	// The installation's id also names its account. updated_at is sent as
	// RFC 3339 here and as unix seconds in every other step, the two shapes
	// GitHub has used.
	history := func(name, final string, steps ...step) effecttest.History {
		return effecttest.History{Name: name, Final: final, Events: func(_ effecttest.Fixture, id string) []effecttest.Event {
			evs := make([]effecttest.Event, len(steps))
			for i, s := range steps {
				at := base.Add(time.Duration(s.at) * time.Second)
				updated := fmt.Sprintf("%q", at.UTC().Format(time.RFC3339))
				if i%2 == 1 {
					updated = fmt.Sprint(at.Unix())
				}
				evs[i] = effecttest.Event{ID: s.delivery + "-" + id, Type: "github.installation." + s.action, ObjectType: "installation",
					Body: fmt.Appendf(nil, `{"action":%q,"installation":{"id":%s,"account":{"id":%s,"login":"octo-%s","type":"Organization"},"updated_at":%s},"sender":{"login":"octocat"}}`,
						s.action, id, id, id, updated)}
			}
			return evs
		}}
	}
	effecttest.Run(t, effecttest.Suite{
		Group: installations.Group(), Kind: "github", AnyOrder: true,
		Histories: []effecttest.History{
			history("suspended last", "suspended", step{"d-a1", "created", 0}, step{"d-a2", "suspend", 1},
				step{"d-a3", "unsuspend", 2}, step{"d-a4", "suspend", 3}),
			history("active last", "active", step{"d-b1", "created", 0}, step{"d-b2", "suspend", 1}, step{"d-b3", "unsuspend", 2}),
			// Deleted is final: a suspend with a newer time does not bring it back.
			history("deleted is final", "deleted", step{"d-c1", "created", 0}, step{"d-c2", "deleted", 1}, step{"d-c3", "suspend", 2}),
		},
		State: func(tb testing.TB, f effecttest.Fixture, id string) string {
			var state, account string
			err := f.DB.QueryRow(context.Background(), `SELECT state, account_id FROM github_installations
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
