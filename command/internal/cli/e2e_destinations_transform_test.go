package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	svix "github.com/svix/svix-webhooks/go"

	"github.com/sluicehq/sluice/internal/refusal"
	"github.com/sluicehq/sluice/internal/store/endpoints"
	"github.com/sluicehq/sluice/internal/testenv"
)

// projection is the transformation the tests set: a projection of the
// invoice's fields under keys of the receiver's, with the envelope's type,
// in a wrapper.
const projection = `{"invoice": {"id": data.object.id, "paid": data.object.amount_paid}, "kind": type, "event": id}`

// transforming gives a new tenant an endpoint taking its invoices through
// transformation (tried on sample, when not nil), at a receiver of its own.
func transforming(t *testing.T, transformation string, sample []byte) (tenantFixture, endpoints.Endpoint, string, *endpointServer) {
	t.Helper()
	f := newTenant(t)
	rc := newEndpointServer(t, nil)
	e, secret, err := endpointsStore(t).CreateEndpoint(context.Background(), endpoints.New{TenantID: f.tenantID, URL: rc.URL,
		Filters: []string{"stripe.invoice.*"}, Transformation: transformation, TransformationSample: sample})
	if err != nil {
		t.Fatal(err)
	}
	return f, e, secret, rc
}

// A transforming endpoint's receiver gets exactly the transformed body,
// signed over those bytes (Svix's library verifies it), with the same
// webhook-id the delivery keeps; the transformation was tried at creation
// on the sample the tenant gave, and a later one on the tenant's last
// event, whose failure there is refused with its reason.
func TestTransformingEndpointReceivesTheTransformedBodySigned(t *testing.T) {
	t.Parallel()
	store := endpointsStore(t)
	ctx := context.Background()
	f, e, secret, rc := transforming(t, projection, []byte(`{"data":{"object":{"id":"in_sample","amount_paid":7}}}`))
	if e.Trial == nil || e.Trial.On != endpoints.TriedOnSample ||
		string(e.Trial.Output) != `{"event":"sample","invoice":{"id":"in_sample","paid":7},"kind":"stripe.invoice.*"}` {
		t.Fatalf("trial %+v, want the sample's projection", e.Trial)
	}
	if e.RulesVersion != 1 || e.Transformation != projection {
		t.Fatalf("endpoint at rules version %d with transformation %q", e.RulesVersion, e.Transformation)
	}

	s := testenv.RandomSuffix()
	paid := invoicePaid("evt_tx_"+s, "in_tx_"+s, f.customer, 4200)
	if code := f.sendSigned(t, paid); code/100 != 2 {
		t.Fatalf("invoice: %d", code)
	}
	waitDelivered(t, e.ID, 1, 30*time.Second)
	got := rc.requests()
	if len(got) != 1 {
		t.Fatalf("the endpoint got %d requests, want 1", len(got))
	}
	r := got[0]
	wh, err := svix.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	if err := wh.Verify(r.body, r.header); err != nil {
		t.Errorf("the transformed request does not verify: %v", err)
	}
	want := fmt.Sprintf(`{"event":"evt_tx_%s","invoice":{"id":"in_tx_%s","paid":4200},"kind":"stripe.invoice.paid"}`, s, s)
	if string(r.body) != want {
		t.Errorf("received %s, want %s", r.body, want)
	}
	var webhookID string
	if err := suite.pool.QueryRow(ctx, `SELECT webhook_id FROM deliveries WHERE endpoint_id = $1`, e.ID).Scan(&webhookID); err != nil {
		t.Fatal(err)
	}
	if r.header.Get("webhook-id") != webhookID || r.header.Get("Content-Type") != "application/json" {
		t.Errorf("webhook-id %q content-type %q, want the delivery's %q and application/json", r.header.Get("webhook-id"),
			r.header.Get("Content-Type"), webhookID)
	}

	// No sample: tried on the tenant's last invoice event.
	other := newEndpointServer(t, nil)
	e2, _, err := store.CreateEndpoint(ctx, endpoints.New{TenantID: f.tenantID, URL: other.URL, Filters: []string{"stripe.invoice.*"},
		Transformation: `{"amount": data.object.amount_paid}`})
	if err != nil {
		t.Fatal(err)
	}
	if e2.Trial == nil || e2.Trial.On != endpoints.TriedOnEvent || e2.Trial.EventID != "evt_tx_"+s || string(e2.Trial.Output) != `{"amount":4200}` {
		t.Errorf("trial %+v, want the last invoice's amount", e2.Trial)
	}
	// One that fails over that event is refused, naming why.
	_, _, err = store.CreateEndpoint(ctx, endpoints.New{TenantID: f.tenantID, URL: other.URL, Filters: []string{"stripe.invoice.*"},
		Transformation: `{"amount": data.object.amount_due}`})
	if !errors.Is(err, refusal.ErrInvalid) || !strings.Contains(err.Error(), "evt_tx_"+s) || !strings.Contains(err.Error(), "amount_due") {
		t.Errorf("a transformation failing on the last event: %v, want an invalid refusal naming the event and the key", err)
	}
	// And one yielding no map never compiles.
	_, _, err = store.CreateEndpoint(ctx, endpoints.New{TenantID: f.tenantID, URL: other.URL, Filters: []string{"stripe.invoice.*"},
		Transformation: `data.object.id + "!"`})
	if !errors.Is(err, refusal.ErrInvalid) || !strings.Contains(err.Error(), "not a map") {
		t.Errorf("a transformation yielding a string: %v, want an invalid refusal saying not a map", err)
	}
}

// A transformation that fails over an event (a field this event lacks)
// makes its delivery dead at once with the reason, in its attempts and its
// last error: nothing is sent, nothing is dropped silently, and the
// endpoint's next event is delivered.
func TestAFailingTransformationMakesADeadDeliveryWithItsReason(t *testing.T) {
	t.Parallel()
	store := endpointsStore(t)
	ctx := context.Background()
	f, e, _, rc := transforming(t, `{"discount": data.object.discount.id}`, []byte(`{"data":{"object":{"discount":{"id":"di_1"}}}}`))
	s := testenv.RandomSuffix()
	if code := f.sendSigned(t, invoicePaid("evt_nodiscount_"+s, "in_nodiscount_"+s, f.customer, 100)); code/100 != 2 {
		t.Fatalf("invoice: %d", code)
	}
	discounted := stripeEvent(t, "invoice.paid", "evt_discount_"+s, "in_discount_"+s,
		map[string]any{"data.object.discount": map[string]any{"id": "di_" + s}, "data.object.customer": f.customer})
	if code := f.sendSigned(t, discounted); code/100 != 2 {
		t.Fatalf("discounted invoice: %d", code)
	}
	waitDelivered(t, e.ID, 1, 30*time.Second)
	deadline := time.Now().Add(30 * time.Second)
	for count(t, `SELECT count(*) FROM deliveries WHERE endpoint_id = $1 AND state = 'dead'`, e.ID) < 1 {
		if time.Now().After(deadline) {
			t.Fatal("no dead delivery after 30s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	list, _, err := store.ListDeliveries(ctx, endpoints.DeliveryFilter{EndpointID: e.ID, State: endpoints.Dead})
	if err != nil || len(list) != 1 {
		t.Fatalf("dead deliveries %v, %v, want one", list, err)
	}
	d, err := store.Delivery(ctx, list[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if d.EventID != "evt_nodiscount_"+s || !strings.Contains(d.LastError, "discount") || len(d.History) != 1 ||
		d.History[0].ErrorClass != endpoints.ErrorClassTransformation || d.History[0].RulesVersion != 1 {
		t.Errorf("dead delivery %+v, want the undiscounted invoice, dead at its first attempt of class transformation (rules 1) naming the key", d)
	}
	got := rc.requests()
	if len(got) != 1 || string(got[0].body) != fmt.Sprintf(`{"discount":"di_%s"}`, s) {
		t.Errorf("the endpoint got %d requests (%v), want only the discounted invoice's", len(got), got)
	}
}

// An edit of the transformation between two events is a new version of the
// rules: each delivery names the version it was created under and the one
// it was sent with, the receiver gets each shape, and a retry of the first
// after the edit sends with the rules current then (its creation's stays).
func TestAnEditBetweenTwoEventsShowsTwoVersions(t *testing.T) {
	t.Parallel()
	store := endpointsStore(t)
	ctx := context.Background()
	f, e, _, rc := transforming(t, `{"v": 1, "id": data.object.id}`, nil)
	s := testenv.RandomSuffix()
	if code := f.sendSigned(t, invoicePaid("evt_v1_"+s, "in_v1_"+s, f.customer, 100)); code/100 != 2 {
		t.Fatalf("first invoice: %d", code)
	}
	waitDelivered(t, e.ID, 1, 30*time.Second)
	v2 := `{"v": 2, "id": data.object.id}`
	e, err := store.UpdateEndpoint(ctx, e.ID, endpoints.Patch{Transformation: &v2})
	if err != nil {
		t.Fatal(err)
	}
	if e.RulesVersion != 2 || e.Trial == nil || e.Trial.On != endpoints.TriedOnEvent || string(e.Trial.Output) != `{"id":"in_v1_`+s+`","v":2}` {
		t.Fatalf("after the edit: version %d, trial %+v", e.RulesVersion, e.Trial)
	}
	if code := f.sendSigned(t, invoicePaid("evt_v2_"+s, "in_v2_"+s, f.customer, 200)); code/100 != 2 {
		t.Fatalf("second invoice: %d", code)
	}
	waitDelivered(t, e.ID, 2, 30*time.Second)
	list, _, err := store.ListDeliveries(ctx, endpoints.DeliveryFilter{EndpointID: e.ID})
	if err != nil || len(list) != 2 {
		t.Fatalf("deliveries %v, %v", list, err)
	}
	versions := map[string][2]int64{}
	for _, d := range list {
		versions[d.EventID] = [2]int64{deref(d.RulesVersion), deref(d.SentRulesVersion)}
	}
	if versions["evt_v1_"+s] != [2]int64{1, 1} || versions["evt_v2_"+s] != [2]int64{2, 2} {
		t.Errorf("versions (created, sent) by event %v, want 1,1 and 2,2", versions)
	}
	var first int64
	for _, d := range list {
		if d.EventID == "evt_v1_"+s {
			first = d.ID
		}
	}
	if _, err := store.Retry(ctx, first); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for len(rc.requests()) < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("the retry was not sent after 30s: %d requests", len(rc.requests()))
		}
		time.Sleep(20 * time.Millisecond)
	}
	var bodies []string
	for _, r := range rc.requests() {
		bodies = append(bodies, string(r.body))
	}
	want := []string{`{"id":"in_v1_` + s + `","v":1}`, `{"id":"in_v2_` + s + `","v":2}`, `{"id":"in_v1_` + s + `","v":2}`}
	if strings.Join(bodies, " ") != strings.Join(want, " ") {
		t.Errorf("received %v, want %v", bodies, want)
	}
	waitDelivered(t, e.ID, 2, 30*time.Second)
	d, err := store.Delivery(ctx, first)
	for err == nil && deref(d.SentRulesVersion) != 2 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		d, err = store.Delivery(ctx, first)
	}
	if err != nil || deref(d.RulesVersion) != 1 || deref(d.SentRulesVersion) != 2 {
		t.Errorf("the retried delivery: created under %d, sent with %d (%v), want 1 and 2", deref(d.RulesVersion), deref(d.SentRulesVersion), err)
	}
	if n := count(t, `SELECT count(*) FROM endpoint_rule_versions WHERE endpoint_id = $1`, e.ID); n != 2 {
		t.Errorf("%d versions kept, want 2", n)
	}
	js, _ := json.Marshal(d)
	if !strings.Contains(string(js), `"rules_version":1`) || !strings.Contains(string(js), `"sent_rules_version":2`) {
		t.Errorf("the delivery as the API shows it: %s", js)
	}
}
