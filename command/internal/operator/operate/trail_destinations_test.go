package operate_test

import (
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/store/endpoints"
	"github.com/sluicehq/sluice/internal/store/inbox"
)

// An event's trail shows its delivery to each endpoint it matched, with
// every request: the failed ones and the success.
func TestTrailShowsTheEventsDeliveriesToEachEndpoint(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := t.Context()
	now := time.Now().UTC()
	ids := b.seed(t, row{b.tenantA, b.sourceA, "evt_d", "stripe.invoice.paid", "in_d", inbox.StatusPublished, now.Add(-time.Minute)},
		row{b.tenantA, b.sourceA, "evt_other", "stripe.invoice.paid", "in_o", inbox.StatusPublished, now.Add(-time.Minute)})
	endpoint := func() string {
		var id string
		if err := b.pool.QueryRow(ctx, `INSERT INTO endpoints (tenant_id, url, filters) VALUES ($1, 'https://example.com/h', '{*}') RETURNING id::text`,
			b.tenantA).Scan(&id); err != nil {
			t.Fatal(err)
		}
		return id
	}
	first, second := endpoint(), endpoint()
	deliver := func(endpoint string, inboxID int64, state string, attempts int) int64 {
		var id int64
		if err := b.pool.QueryRow(ctx, `
INSERT INTO deliveries (endpoint_id, tenant_id, webhook_id, partition_key, state, attempts, delivered_at, last_status, latency_ms,
                        inbox_id, event_id, event_type, source, topic, partition, "offset")
VALUES ($1, $2, 'msg_' || $3::bigint, 'invoice/in_d', $4, $5, CASE WHEN $4::text = 'delivered' THEN now() END,
        CASE WHEN $4::text = 'delivered' THEN 204 END, 30, $3, 'evt', 'stripe.invoice.paid', 's', 'sluice.invoices', 0, 1)
RETURNING id`, endpoint, b.tenantA, inboxID, state, attempts).Scan(&id); err != nil {
			t.Fatal(err)
		}
		return id
	}
	delivered := deliver(first, ids[0], "delivered", 2)
	if _, err := b.pool.Exec(ctx, `INSERT INTO delivery_attempts (delivery_id, attempt, endpoint_id, error_class, error, latency_ms)
VALUES ($1, 1, $2, 'timeout', 'no answer in 10s', 10000)`, delivered, first); err != nil {
		t.Fatal(err)
	}
	pending := deliver(second, ids[0], "pending", 0)
	deliver(first, ids[1], "delivered", 1)

	trail, err := b.op.Trail(ctx, nil, ids[0])
	if err != nil {
		t.Fatal(err)
	}
	if len(trail.Destinations) != 2 {
		t.Fatalf("destinations = %+v, want the event's two", trail.Destinations)
	}
	byID := map[int64]endpoints.Delivery{}
	for _, d := range trail.Destinations {
		byID[d.ID] = d.Delivery
	}
	d := byID[delivered]
	if d.EndpointID != first || d.State != endpoints.Delivered || len(d.History) != 2 || d.History[0].ErrorClass != "timeout" ||
		!d.History[1].OK() || d.History[1].Status != 204 {
		t.Errorf("the delivered one: %+v", d)
	}
	if p := byID[pending]; p.EndpointID != second || p.State != endpoints.Pending || len(p.History) != 0 {
		t.Errorf("the pending one: %+v", p)
	}
}

// The trail says which of the tenant's enabled endpoints take the event
// under their filters and expressions as they are now, and why not, over
// the event's envelope and body: a reading of today's endpoints, beside
// what the fan-out wrote.
func TestTrailJudgesTheEventByTodaysEndpoints(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := t.Context()
	ids := b.seed(t, row{b.tenantA, b.sourceA, "evt_j", "invoice.paid", "in_j", inbox.StatusPublished, time.Now().UTC()})
	if _, err := b.pool.Exec(ctx, `UPDATE inbox_payloads SET body = $2 WHERE inbox_id = $1`, ids[0],
		[]byte(`{"id":"evt_j","type":"invoice.paid","data":{"object":{"id":"in_j","amount_paid":25000}}}`)); err != nil {
		t.Fatal(err)
	}
	endpoint := func(filter, expr string, disabled bool) string {
		var id string
		if err := b.pool.QueryRow(ctx, `INSERT INTO endpoints (tenant_id, url, filters, filter_expression, disabled_at)
VALUES ($1, 'https://example.com/h', ARRAY[$2], nullif($3, ''), CASE WHEN $4 THEN now() END) RETURNING id::text`,
			b.tenantA, filter, expr, disabled).Scan(&id); err != nil {
			t.Fatal(err)
		}
		return id
	}
	want := map[string]string{
		endpoint("stripe.invoice.*", "", false): "taken",
		endpoint("*", `data.object.amount_paid > 10000 && subject == "in_j" && type == "stripe.invoice.paid"`, false): "taken",
		endpoint("*", `data.object.amount_paid < 100`, false):                                                         "declined",
		endpoint("hmac.*", "", false):                    "type",
		endpoint("*", `data.object.missing == 1`, false): "failed",
		endpoint("*", `nosuchfunction(type)`, false):     "unusable",
	}
	endpoint("*", "", true) // disabled: not judged
	trail, err := b.op.Trail(ctx, nil, ids[0])
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, k := range trail.TakenNow {
		got[k.EndpointID] = k.Verdict
		if k.Takes != (k.Verdict == "taken") {
			t.Errorf("%+v: takes disagrees with the verdict", k)
		}
	}
	if len(got) != len(want) {
		t.Errorf("judged %v, want %v", got, want)
	}
	for id, v := range want {
		if got[id] != v {
			t.Errorf("endpoint %s: %q, want %q", id, got[id], v)
		}
	}
}
