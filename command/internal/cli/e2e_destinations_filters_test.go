package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/keyring"
	"github.com/sluicehq/sluice/internal/store/endpoints"
	"github.com/sluicehq/sluice/internal/testenv"
	"github.com/sluicehq/sluice/internal/testenv/examples"
)

// stripeEvent is one of Stripe's published examples with its ids made
// this test's and the fields set (dotted paths under the event) changed.
func stripeEvent(t *testing.T, example, eventID, objectID string, set map[string]any) []byte {
	t.Helper()
	var ev map[string]any
	if err := json.Unmarshal(examples.Payload("stripe", example), &ev); err != nil {
		t.Fatal(err)
	}
	ev["id"] = eventID
	set["data.object.id"] = objectID
	for path, v := range set {
		parts := strings.Split(path, ".")
		m := ev
		for _, p := range parts[:len(parts)-1] {
			next, ok := m[p].(map[string]any)
			if !ok {
				next = map[string]any{}
				m[p] = next
			}
			m = next
		}
		m[parts[len(parts)-1]] = v
	}
	body, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	return body
}

// byPath is one server for many endpoints: each at its own path, the
// provider event ids (ce-id) each received kept by path.
type byPath struct {
	*httptest.Server
	mu  sync.Mutex
	got map[string][]string
}

func newByPath(t *testing.T) *byPath {
	b := &byPath{got: map[string][]string{}}
	b.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b.mu.Lock()
		b.got[r.URL.Path] = append(b.got[r.URL.Path], r.Header.Get("ce-id"))
		b.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(b.Close)
	return b
}

func (b *byPath) received(path string) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.got[path])
}

// endpointsStore is the endpoints' store over the suite's database, as the
// admin API and the CLI use it (its checks included).
func endpointsStore(t *testing.T) endpoints.Store {
	t.Helper()
	ring, err := keyring.Parse(suite.secretKey)
	if err != nil {
		t.Fatal(err)
	}
	return endpoints.Store{Pool: suite.pool, Ring: ring, Limits: endpoints.Limits{AllowHTTP: true}}
}

// A tenant's endpoints with filter expressions over real Stripe payloads
// each receive exactly the events their expression takes, and a declined
// event leaves no delivery row: a table of expressions, each with the
// events it must take written out by hand.
func TestFilteredEndpointsReceiveExactlyWhatTheirExpressionTakes(t *testing.T) {
	t.Parallel()
	f := newTenant(t)
	s := testenv.RandomSuffix()
	inv := func(name string) string { return "in_" + name + "_" + s }
	events := map[string][]byte{
		"big": stripeEvent(t, "invoice.paid", "evt_big_"+s, inv("big"), map[string]any{"data.object.amount_paid": 25000,
			"data.object.customer": f.customer}),
		"small": stripeEvent(t, "invoice.paid", "evt_small_"+s, inv("small"), map[string]any{"data.object.amount_paid": 900,
			"data.object.currency": "eur", "data.object.billing_reason": "manual", "data.object.customer": f.customer}),
		"exact": stripeEvent(t, "invoice.paid", "evt_exact_"+s, inv("exact"), map[string]any{"data.object.amount_paid": 10000,
			"data.object.billing_reason": "subscription_cycle", "data.object.customer": f.customer}),
		"zero": stripeEvent(t, "invoice.paid", "evt_zero_"+s, inv("zero"), map[string]any{"data.object.amount_paid": 0,
			"data.object.billing_reason": "subscription_update", "data.object.customer": f.customer}),
		"live": stripeEvent(t, "invoice.paid", "evt_live_"+s, inv("live"), map[string]any{"data.object.amount_paid": 50000,
			"data.object.currency": "gbp", "livemode": true, "data.object.billing_reason": "manual", "data.object.customer": f.customer}),
		"refund": stripeEvent(t, "charge.refunded", "evt_refund_"+s, "ch_refund_"+s, map[string]any{}),
		"partial": stripeEvent(t, "charge.refunded", "evt_partial_"+s, "ch_partial_"+s, map[string]any{"data.object.amount": 5000,
			"data.object.amount_refunded": 1000, "data.object.refunded": false, "data.object.metadata": map[string]any{"order": "o-1"}}),
		"payment": stripeEvent(t, "invoice_payment.paid", "evt_payment_"+s, "inpay_"+s, map[string]any{}),
	}
	all := slices.Sorted(maps.Keys(events))
	over := "[1,2,3,4,5,6,7,8,9,10].all(a, [1,2,3,4,5,6,7,8,9,10].all(b, [1,2,3,4,5,6,7,8,9,10].all(c, " +
		"[1,2,3,4,5,6,7,8,9,10].all(d, [1,2,3,4,5,6,7,8,9,10].all(e, a+b+c+d+e > 0)))))"
	table := []struct {
		expr string
		want []string
	}{
		{`true`, all},
		{`false`, nil},
		{`data.object.amount_paid > 10000 && subject.startsWith("in_")`, []string{"big", "live"}},
		{`type == "stripe.charge.refunded"`, []string{"partial", "refund"}},
		{`type.endsWith(".paid")`, []string{"big", "exact", "live", "payment", "small", "zero"}},
		{`data.object.currency == "usd"`, []string{"big", "exact", "partial", "payment", "refund", "zero"}},
		{`has(data.object.amount_paid) && data.object.amount_paid >= 10000`, []string{"big", "exact", "live"}},
		{`data.object.amount_paid == 0`, []string{"zero"}},
		{`data.object.billing_reason in ["subscription_create", "subscription_cycle"]`, []string{"big", "exact"}},
		{`data.object.refunded`, []string{"refund"}},
		{`data.object.amount_refunded < data.object.amount`, []string{"partial"}},
		{`has(data.previous_attributes)`, []string{"partial", "refund"}},
		{`body.livemode`, []string{"live"}},
		{`!body.livemode`, []string{"big", "exact", "partial", "payment", "refund", "small", "zero"}},
		// The subject is the resource an event is ordered by: a refund's and
		// an invoice payment's is the invoice they belong to.
		{`subject != data.object.id`, []string{"partial", "payment", "refund"}},
		{fmt.Sprintf(`data.object.customer == %q`, f.customer), []string{"big", "exact", "live", "small", "zero"}},
		{`data.object.status_transitions.paid_at > 0 && data.object.object == "invoice"`, []string{"big", "exact", "live", "small", "zero"}},
		{`data.object.metadata.order == "o-1"`, []string{"partial"}},
		{`"order" in data.object.metadata`, []string{"partial"}},
		{`data.object.currency.matches("^(eur|gbp)$")`, []string{"live", "small"}},
		{`time > timestamp("2020-01-01T00:00:00Z") && source.contains(tenant_id)`, all},
		{`id.startsWith("evt_big_")`, []string{"big"}},
		{`data.object.amount_paid / 100.0 > 99.5`, []string{"big", "exact", "live"}},
		// An error on one side of || is absorbed when the other side is
		// true, and not taken when it is false (CEL's commutative logic).
		{`data.object.amount_paid > 1000 || data.object.amount_refunded > 1000`, []string{"big", "exact", "live", "payment", "refund"}},
		{`data.object.payment.type == "payment_intent"`, []string{"payment"}},
		// Stopped at the cost limit: not taken, and the fan-out goes on.
		{over, nil},
	}
	store := endpointsStore(t)
	rc := newByPath(t)
	ids := make([]string, len(table))
	for i, row := range table {
		e, _, err := store.CreateEndpoint(context.Background(), endpoints.New{TenantID: f.tenantID, URL: rc.URL + "/" + strconv.Itoa(i),
			Filters: []string{"stripe.*"}, Expression: row.expr})
		if err != nil {
			t.Fatalf("%s: %v", row.expr, err)
		}
		ids[i] = e.ID
	}
	for _, name := range all {
		if code := f.sendSigned(t, events[name]); code/100 != 2 {
			t.Fatalf("%s: %d", name, code)
		}
	}
	// The first endpoint takes every event, so once it has all of them
	// the fan-out wrote every endpoint's rows (one transaction per record).
	waitDelivered(t, ids[0], len(all), 60*time.Second)
	deadline := time.Now().Add(30 * time.Second)
	for i, row := range table {
		for time.Now().Before(deadline) && count(t, `SELECT count(*) FROM deliveries WHERE endpoint_id = $1 AND state = 'delivered'`, ids[i]) < len(row.want) {
			time.Sleep(20 * time.Millisecond)
		}
	}
	name := func(eventID string) string { return strings.TrimSuffix(strings.TrimPrefix(eventID, "evt_"), "_"+s) }
	for i, row := range table {
		rows, err := suite.pool.Query(context.Background(), `SELECT event_id FROM deliveries WHERE endpoint_id = $1 ORDER BY event_id`, ids[i])
		if err != nil {
			t.Fatal(err)
		}
		var written []string
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				t.Fatal(err)
			}
			written = append(written, name(id))
		}
		rows.Close()
		var got []string
		for _, id := range rc.received("/" + strconv.Itoa(i)) {
			got = append(got, name(id))
		}
		slices.Sort(got)
		if !slices.Equal(written, row.want) {
			t.Errorf("%s: delivery rows for %v, want %v", row.expr, written, row.want)
		}
		if !slices.Equal(got, row.want) {
			t.Errorf("%s: received %v, want %v", row.expr, got, row.want)
		}
	}
}

// An event whose body travelled by claim (above 256 KiB: the record holds
// no body) is judged over its body, loaded from its inbox row.
func TestFilterJudgesAClaimedBody(t *testing.T) {
	t.Parallel()
	f := newTenant(t)
	s := testenv.RandomSuffix()
	pad := strings.Repeat("x", 300<<10)
	big := stripeEvent(t, "invoice.paid", "evt_bigbody_"+s, "in_bigbody_"+s, map[string]any{"data.object.amount_paid": 30000,
		"data.object.customer": f.customer, "data.object.description": pad})
	small := stripeEvent(t, "invoice.paid", "evt_smallbody_"+s, "in_smallbody_"+s, map[string]any{"data.object.amount_paid": 500,
		"data.object.customer": f.customer, "data.object.description": pad})
	store := endpointsStore(t)
	rc := newByPath(t)
	filtered, _, err := store.CreateEndpoint(context.Background(), endpoints.New{TenantID: f.tenantID, URL: rc.URL + "/filtered",
		Filters: []string{"stripe.*"}, Expression: `data.object.amount_paid > 10000 && size(data.object.description) > 1000`})
	if err != nil {
		t.Fatal(err)
	}
	all, _, err := store.CreateEndpoint(context.Background(), endpoints.New{TenantID: f.tenantID, URL: rc.URL + "/all", Filters: []string{"stripe.*"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, body := range [][]byte{big, small} {
		if code := f.sendSigned(t, body); code/100 != 2 {
			t.Fatalf("%d", code)
		}
	}
	waitDelivered(t, all.ID, 2, 60*time.Second)
	if n := count(t, `SELECT count(*) FROM inbox WHERE tenant_id = $1 AND event_id = $2`, f.tenantID, "evt_bigbody_"+s); n != 1 {
		t.Fatalf("the big event: %d inbox rows", n)
	}
	waitDelivered(t, filtered.ID, 1, 30*time.Second)
	if got := rc.received("/filtered"); !slices.Equal(got, []string{"evt_bigbody_" + s}) {
		t.Errorf("the filtered endpoint received %v, want the big invoice only", got)
	}
	if n := count(t, `SELECT count(*) FROM deliveries WHERE endpoint_id = $1`, filtered.ID); n != 1 {
		t.Errorf("the filtered endpoint has %d deliveries, want 1", n)
	}
}
