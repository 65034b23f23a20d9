package endpoints_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sluicehq/sluice/internal/envelope"
	"github.com/sluicehq/sluice/internal/store/endpoints"
)

// announce writes tr in a transaction of its own and says whether it wrote.
func announce(t *testing.T, topics envelope.Topics, tr endpoints.Transition) bool {
	t.Helper()
	var wrote bool
	err := pgx.BeginFunc(context.Background(), pool, func(tx pgx.Tx) error {
		var err error
		wrote, err = endpoints.Announce(context.Background(), tx, topics, tr)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return wrote
}

// A transition is written once under its business key (endpoint,
// transition, moment), whoever writes it again: one inbox row, its payload
// and one outbox row on the destinations topic, keyed by the endpoint.
func TestATransitionIsAnnouncedOnce(t *testing.T) {
	t.Parallel()
	s := newStore(t, endpoints.Limits{})
	tenant := newTenant(t)
	e, _ := create(t, s, endpoints.New{TenantID: tenant})
	topics := envelope.Topics{Prefix: "ops-" + tenant}
	at := time.Now().Truncate(time.Microsecond)
	tr := endpoints.Transition{Type: endpoints.EndpointDisabled, TenantID: tenant, EndpointID: e.ID, At: at, Reason: endpoints.ReasonFailing}
	if !announce(t, topics, tr) {
		t.Fatal("the first announcement wrote nothing")
	}
	if announce(t, topics, tr) {
		t.Error("the same transition was announced twice")
	}
	var (
		n       int
		topic   string
		key     []byte
		payload []byte
		typ     string
	)
	err := pool.QueryRow(context.Background(), `SELECT count(*) OVER (), o.topic, o.key, p.body, i.event_type
FROM inbox i JOIN outbox o ON o.inbox_id = i.id JOIN inbox_payloads p ON p.inbox_id = i.id
WHERE i.source_id = $1 AND i.source_account = $2`, endpoints.OperationalSourceID, e.ID).Scan(&n, &topic, &key, &payload, &typ)
	if err != nil {
		t.Fatal(err)
	}
	if n != 1 || topic != topics.Destinations() || string(key) != envelope.Key(tenant, "endpoint", e.ID) || typ != string(endpoints.EndpointDisabled) {
		t.Errorf("%d rows, topic %s, key %s, type %s", n, topic, key, typ)
	}
	var body endpoints.OperationalBody
	if err := json.Unmarshal(payload, &body); err != nil {
		t.Fatal(err)
	}
	if body.Data.EndpointID != e.ID || body.Data.TenantID != tenant || body.Data.Trigger != "automatic" || body.Data.DisabledAt == nil ||
		!body.Data.DisabledAt.Equal(at) {
		t.Errorf("body %s", payload)
	}
}

// A recovery is told only of a streak that was told as failing.
func TestARecoveryIsToldOnlyAfterItsFailing(t *testing.T) {
	t.Parallel()
	s := newStore(t, endpoints.Limits{})
	tenant := newTenant(t)
	e, _ := create(t, s, endpoints.New{TenantID: tenant})
	topics := envelope.Topics{Prefix: "ops-" + tenant}
	since := time.Now().Add(-2 * time.Hour).Truncate(time.Microsecond)
	recovered := endpoints.Transition{Type: endpoints.EndpointRecovered, TenantID: tenant, EndpointID: e.ID, At: since, FailingSince: &since}
	if announce(t, topics, recovered) {
		t.Fatal("a recovery of a streak never told as failing was told")
	}
	if !announce(t, topics, endpoints.Transition{Type: endpoints.EndpointFailing, TenantID: tenant, EndpointID: e.ID, At: since, FailingSince: &since}) {
		t.Fatal("failing: nothing written")
	}
	if !announce(t, topics, recovered) {
		t.Fatal("the recovery of a streak told as failing was not told")
	}
	if announce(t, topics, recovered) {
		t.Error("the recovery was told twice")
	}
}

// An operator's disabling of an enabled endpoint is told (trigger manual);
// disabling it again tells nothing.
func TestAnOperatorsDisablingIsToldOnce(t *testing.T) {
	t.Parallel()
	s := newStore(t, endpoints.Limits{})
	tenant := newTenant(t)
	e, _ := create(t, s, endpoints.New{TenantID: tenant})
	s.Topics = &envelope.Topics{Prefix: "ops-" + tenant}
	for range 2 {
		if _, err := s.DisableEndpoint(context.Background(), e.ID); err != nil {
			t.Fatal(err)
		}
	}
	var n int
	var body []byte
	if err := pool.QueryRow(context.Background(), `SELECT count(*) OVER (), p.body FROM inbox i JOIN inbox_payloads p ON p.inbox_id = i.id
WHERE i.source_id = $1 AND i.source_account = $2`, endpoints.OperationalSourceID, e.ID).Scan(&n, &body); err != nil {
		t.Fatal(err)
	}
	var got endpoints.OperationalBody
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	if n != 1 || got.Type != endpoints.EndpointDisabled || got.Data.Reason != endpoints.ReasonOperator || got.Data.Trigger != "manual" {
		t.Errorf("%d events, body %s", n, body)
	}
}
