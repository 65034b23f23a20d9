package ingest_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/envelope"
	"github.com/sluicehq/sluice/internal/ingest"
	"github.com/sluicehq/sluice/internal/provider"
	"github.com/sluicehq/sluice/internal/provider/signature"
	"github.com/sluicehq/sluice/internal/store/endpoints"
	"github.com/sluicehq/sluice/internal/store/tenancy"
)

// record is the outbox row of one event.
type record struct {
	topic   string
	key     string
	headers map[string]string
	payload []byte
}

func (b *bundle) record(t *testing.T, sourceID, eventID string) record {
	t.Helper()
	var r record
	var key []byte
	err := b.pool.QueryRow(context.Background(), `SELECT o.topic, o.key, o.headers, o.payload FROM outbox o JOIN inbox i ON i.id = o.inbox_id
WHERE i.source_id = $1 AND i.event_id = $2`, sourceID, eventID).Scan(&r.topic, &key, &r.headers, &r.payload)
	if err != nil {
		t.Fatalf("outbox row for %s: %v", eventID, err)
	}
	r.key = string(key)
	return r
}

func (b *bundle) endpoint(t *testing.T, filters ...string) (endpoints.Store, string) {
	t.Helper()
	store := endpoints.Store{Pool: b.pool, Ring: b.store.Ring}
	e, _, err := store.CreateEndpoint(context.Background(), endpoints.New{TenantID: b.tenantID, URL: "https://example.com/hook", Filters: filters})
	if err != nil {
		t.Fatal(err)
	}
	return store, e.ID
}

// dispute is a signed Stripe charge.dispute.created, a type no handler and
// no schema knows, sent until its fate is want: the filters ingest reads
// are a refresh old at most, so a change is seen after it, not at once.
func (b *bundle) disputeUntil(t *testing.T, want string) (eventID string, body []byte) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for i := 0; ; i++ {
		eventID = fmt.Sprintf("evt_dispute_%d_%d", time.Now().UnixNano(), i)
		body = event(eventID, "charge.dispute.created", `{"id":"dp_1","object":"dispute","charge":"ch_1","amount":500}`)
		if got := b.send(t, body, nil); got != http.StatusAccepted {
			t.Fatalf("charge.dispute.created: status %d, want 202", got)
		}
		if b.stored(t, b.sourceID, eventID).status == want {
			return eventID, body
		}
		if time.Now().After(deadline) {
			t.Fatalf("charge.dispute.created still not %s after 10 s", want)
		}
	}
}

func TestUnknownTypeIsPublishedForTheEndpointsThatTakeIt(t *testing.T) {
	t.Parallel()
	b := setup(t, ingest.Config{EndpointsRefresh: 20 * time.Millisecond})
	ctx := context.Background()

	// No endpoint yet: kept, unpublished, as ever.
	lone, _ := b.disputeUntil(t, "unhandled")
	if n := b.outbox(t); n != 0 {
		t.Fatalf("outbox rows = %d, want 0 with no endpoint", n)
	}

	store, endpointID := b.endpoint(t, "stripe.charge.*")
	eventID, body := b.disputeUntil(t, "published")
	r := b.record(t, b.sourceID, eventID)
	key := b.tenantID + "/dispute/dp_1"
	if r.topic != "sluice.destinations" || r.key != key || !bytes.Equal(r.payload, body) {
		t.Fatalf("record on %s keyed %s with payload %q, want sluice.destinations, %s and the body as sent", r.topic, r.key, r.payload, key)
	}
	want := map[string]string{
		envelope.HeaderSpecVersion: "1.0", envelope.HeaderID: eventID, envelope.HeaderType: "stripe.charge.dispute.created",
		envelope.HeaderSource: envelope.SourceURI(b.tenantID, b.sourceID), envelope.HeaderSubject: "dp_1",
		envelope.HeaderTenantID: b.tenantID, envelope.HeaderPartitionKey: key, envelope.HeaderContentType: "application/json",
	}
	for h, v := range want {
		if r.headers[h] != v {
			t.Errorf("header %s = %q, want %q (headers %v)", h, r.headers[h], v, r.headers)
		}
	}
	if r.headers[envelope.HeaderTime] == "" || r.headers[envelope.HeaderTraceParent] == "" || r.headers[envelope.HeaderDataSchema] != "" {
		t.Errorf("headers %v: want a time and a traceparent, no data schema", r.headers)
	}
	if got := b.stored(t, b.sourceID, lone).status; got != "unhandled" {
		t.Errorf("the event kept before the endpoint existed is %s, want unhandled still", got)
	}

	// A type the endpoint does not take stays unhandled.
	other := event("evt_balance_"+b.tenantID, "balance.available", `{"id":"bal","object":"balance"}`)
	if got := b.send(t, other, nil); got != http.StatusAccepted {
		t.Fatalf("balance.available: status %d", got)
	}
	if got := b.stored(t, b.sourceID, "evt_balance_"+b.tenantID).status; got != "unhandled" {
		t.Fatalf("balance.available is %s, want unhandled: no filter takes it", got)
	}

	// A change of filters is seen within the refresh.
	if _, err := store.UpdateEndpoint(ctx, endpointID, endpoints.Patch{Filters: []string{"stripe.balance.*"}}); err != nil {
		t.Fatal(err)
	}
	b.disputeUntil(t, "unhandled")
}

func TestUnknownTypeWithNoObjectIsKeyedByItsEventID(t *testing.T) {
	t.Parallel()
	b := setup(t, ingest.Config{EndpointsRefresh: time.Millisecond})
	b.endpoint(t, "github.star.*")
	secret := "gh-" + b.secret
	src := b.newSource(t, tenancy.NewSource{TenantID: b.tenantID, Kind: "github", Secret: secret})
	body := []byte(`{"action":"created","starred_at":"2026-05-06T07:08:09Z","repository":{"id":1}}`)
	delivery := "5f8a1c2e-cc78-11e3-81ab-4c9367dc0958"
	h := http.Header{"X-Hub-Signature-256": {signature.SignGitHub(secret, body)}, "X-Github-Delivery": {delivery}, "X-Github-Event": {"star"}}
	if status, answer := b.post(t, "/v1/ingest/"+src, body, h); status != http.StatusAccepted || !bytes.Contains(answer, []byte(`"accepted"`)) {
		t.Fatalf("status %d: %s, want 202 accepted", status, answer)
	}
	r := b.record(t, src, delivery)
	key := b.tenantID + "/event/" + delivery
	if r.topic != "sluice.destinations" || r.key != key || r.headers[envelope.HeaderType] != "github.star.created" || r.headers[envelope.HeaderPartitionKey] != key {
		t.Fatalf("record on %s keyed %s headers %v, want sluice.destinations keyed %s", r.topic, r.key, r.headers, key)
	}
}

// Reconciliation enters through the same door: a recovered event of a type
// only an endpoint takes is published for it, not skipped.
func TestRecoveredUnknownTypeIsPublishedForAnEndpoint(t *testing.T) {
	t.Parallel()
	b := setup(t, ingest.Config{EndpointsRefresh: time.Millisecond})
	ctx := context.Background()
	found := func(id string) []provider.Found {
		return []provider.Found{{Body: event(id, "charge.dispute.created", `{"id":"dp_2","object":"dispute"}`)}}
	}
	got, err := b.svc.Reconcile(ctx, b.sourceID, found("evt_rec_none"))
	if err != nil || len(got) != 1 || !got[0].Skipped {
		t.Fatalf("with no endpoint: %+v, %v; want it skipped", got, err)
	}
	b.endpoint(t, "stripe.charge.dispute.created")
	deadline := time.Now().Add(10 * time.Second)
	for i := 0; ; i++ {
		id := fmt.Sprintf("evt_rec_%d", i)
		got, err := b.svc.Reconcile(ctx, b.sourceID, found(id))
		if err != nil {
			t.Fatal(err)
		}
		if !got[0].Skipped {
			if got[0].Outcome != ingest.OutcomeAccepted || b.record(t, b.sourceID, id).topic != "sluice.destinations" {
				t.Fatalf("recovered %+v, want accepted and published on sluice.destinations", got[0])
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("recovered event still skipped 10 s after an endpoint took its type")
		}
	}
}
