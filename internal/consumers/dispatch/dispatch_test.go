package dispatch_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicehq/sluice/internal/consumers"
	"github.com/sluicehq/sluice/internal/consumers/consumertest"
	"github.com/sluicehq/sluice/internal/consumers/dispatch"
	"github.com/sluicehq/sluice/internal/envelope"
	"github.com/sluicehq/sluice/internal/store/endpoints"
)

func TestMain(m *testing.M) { os.Exit(consumertest.Main(m)) }

// prefix names the deployment whose endpoint these tests write to.
const prefix = "dispatch-test"

// deployment writes the deployment's endpoint row, as a process with
// --dispatch-url does at start.
func deployment(t *testing.T, env *consumertest.Env) {
	t.Helper()
	if err := (endpoints.Store{Pool: env.Pool}).EnsureDeploymentEndpoint(context.Background(), prefix, "https://mail.example/intents"); err != nil {
		t.Fatal(err)
	}
}

func intent(f consumertest.Fixture, topic, key string) *kgo.Record {
	ev := f.Event(key, "sluice.email.credits_granted", "workspace", f.WorkspaceID, time.Now())
	return consumertest.Record(topic, ev, fmt.Appendf(nil, `{"kind":"credits-granted","idempotency_key":%q}`, key))
}

func intentKey(f consumertest.Fixture, invoiceID string) string {
	return fmt.Sprintf("%s/%s/%s/initial-credit-grant/confirmation-email", f.SourceID, f.Account, invoiceID)
}

// delivered describes key's delivery to the deployment's endpoint: its
// rows, and of them those waiting to be sent.
func delivered(tb testing.TB, env *consumertest.Env, key string) string {
	id := endpoints.DeploymentEndpointID(prefix)
	n := env.Count(tb, `SELECT count(*) FROM deliveries WHERE endpoint_id = $1 AND webhook_id = $2 AND event_id = $2`, id, key)
	q := env.Count(tb, `SELECT count(*) FROM deliveries WHERE endpoint_id = $1 AND webhook_id = $2 AND state = 'pending'`, id, key)
	return fmt.Sprintf("%d deliveries, %d queued", n, q)
}

// The invariants every handler keeps, for the dispatcher: each intent is
// one delivery to the deployment's endpoint, with its key as webhook-id,
// whatever the number of deliveries and rewinds; an intent with no key is
// dead-lettered.
func TestConformance(t *testing.T) {
	t.Parallel()
	deployment(t, consumertest.Shared(t))
	consumertest.Conformance(t, consumertest.Suite{
		Kind: "stripe", Topic: dispatch.Topic,
		Handler: func(*consumertest.Env, envelope.Topics, string) consumers.Handler { return dispatch.New(prefix) },
		Histories: []consumertest.History{{Name: "an intent", Final: "1 deliveries, 1 queued",
			Events: func(f consumertest.Fixture, topic, invoiceID string) []*kgo.Record {
				return []*kgo.Record{intent(f, topic, intentKey(f, invoiceID))}
			}}},
		State: func(tb testing.TB, env *consumertest.Env, f consumertest.Fixture, invoiceID string) string {
			return delivered(tb, env, intentKey(f, invoiceID))
		},
		Poison: func(f consumertest.Fixture, topic, _ string) *kgo.Record {
			rec := intent(f, topic, "")
			rec.Value = nil
			return rec
		},
	})
}

// A send the dispatcher of before recorded itself (dispatch_log, read
// through dispatch_delivered) is not handed to the deliverer after the
// upgrade; the others are.
func TestIntentsSentBeforeTheUpgradeAreNotDeliveredAgain(t *testing.T) {
	t.Parallel()
	env := consumertest.Shared(t)
	deployment(t, env)
	f := env.Tenant(t, "stripe")
	topic := env.Topic(t, "notifications", 1)
	before, after := intentKey(f, "in_before"), intentKey(f, "in_after")
	if _, err := env.Pool.Exec(t.Context(), `INSERT INTO dispatch_log (idempotency_key, consumer_group, topic, partition, "offset", status)
		VALUES ($1, 'old', $2, 0, 0, 202)`, before, topic); err != nil {
		t.Fatal(err)
	}
	recs := []*kgo.Record{intent(f, topic, before), intent(f, topic, after)}
	env.Produce(t, recs...)
	cfg := consumers.Config{Topics: []string{topic}, Group: topic + ".dispatch"}
	g := env.Run(t, cfg, dispatch.New(prefix), nil)
	env.WaitCommitted(t, g.ID, time.Minute, recs...)
	if got := delivered(t, env, before); got != "0 deliveries, 0 queued" {
		t.Errorf("sent before the upgrade: %s, want none", got)
	}
	if got := delivered(t, env, after); got != "1 deliveries, 1 queued" {
		t.Errorf("not sent before: %s, want one", got)
	}
}
