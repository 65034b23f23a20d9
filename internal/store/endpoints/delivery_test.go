package endpoints_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sluicehq/sluice/internal/audit"
	"github.com/sluicehq/sluice/internal/pg"
	"github.com/sluicehq/sluice/internal/refusal"
	"github.com/sluicehq/sluice/internal/store/endpoints"
	"github.com/sluicehq/sluice/internal/testenv"
)

// deliveryBundle is a database of its own (this file's tests do not share
// the package's TestMain: the endpoints' own tests may have one) with a
// tenant, an endpoint, and a store acting for the CLI.
type deliveryBundle struct {
	pool             *pgxpool.Pool
	store            endpoints.Store
	tenant, endpoint string
}

func setupDeliveries(t *testing.T) *deliveryBundle {
	t.Helper()
	ctx := context.Background()
	db, err := testenv.Require(t).NewDatabase(ctx, "deliveries")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Drop)
	pool, err := pg.Connect(ctx, db.URL, 4)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	b := &deliveryBundle{pool: pool, store: endpoints.Store{Pool: pool, Actor: &audit.Actor{}}}
	b.tenant = b.newTenant(t)
	b.endpoint = b.newEndpoint(t, b.tenant)
	return b
}

func (b *deliveryBundle) newTenant(t *testing.T) string {
	t.Helper()
	var id string
	if err := b.pool.QueryRow(t.Context(), `INSERT INTO tenants (name) VALUES ($1) RETURNING id::text`, "t-"+testenv.RandomSuffix()).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

func (b *deliveryBundle) newEndpoint(t *testing.T, tenant string) string {
	t.Helper()
	var id string
	if err := b.pool.QueryRow(t.Context(), `INSERT INTO endpoints (tenant_id, url, filters) VALUES ($1, 'https://example.com/hook', '{*}') RETURNING id::text`,
		tenant).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

// row is a delivery as the fan-out and the deliverer leave it.
type row struct {
	endpoint, tenant string
	state            endpoints.DeliveryState
	attempts         int
	createdAt        time.Time
	inboxID          *int64
	eventID          string
}

// insert writes r, as the fan-out and then the deliverer would, and
// returns its id; a delivered row carries its success's figures, and every
// attempt before the last (all of them, when not delivered) is a failed
// attempt row.
func (b *deliveryBundle) insert(t *testing.T, r row) int64 {
	t.Helper()
	if r.endpoint == "" {
		r.endpoint, r.tenant = b.endpoint, b.tenant
	}
	if r.createdAt.IsZero() {
		r.createdAt = time.Now()
	}
	if r.eventID == "" {
		r.eventID = "evt_" + testenv.RandomSuffix()
	}
	var id int64
	err := b.pool.QueryRow(t.Context(), `
INSERT INTO deliveries (endpoint_id, tenant_id, webhook_id, partition_key, state, attempts, next_at, created_at, accepted_at,
                        delivered_at, last_status, last_error, latency_ms, inbox_id, event_id, event_type, source, topic, partition, "offset")
VALUES ($1, $2, 'msg_' || $3, 'order/' || $3, $4, $5, now() + interval '1 hour', $6::timestamptz, $6::timestamptz,
        CASE WHEN $4::text = 'delivered' THEN $6::timestamptz + interval '1 second' END,
        CASE WHEN $4::text = 'delivered' THEN 200 WHEN $5::int > 0 THEN 503 END,
        CASE WHEN $4 <> 'delivered' AND $5::int > 0 THEN 'status 503' END,
        CASE WHEN $5::int > 0 THEN 42 END, $7, $3, 'api.order.placed', '/tenants/x/sources/y', 'sluice.order', 0, 1)
RETURNING id`, r.endpoint, r.tenant, r.eventID, string(r.state), r.attempts, r.createdAt, r.inboxID).Scan(&id)
	if err != nil {
		t.Fatal(err)
	}
	failed := r.attempts
	if r.state == endpoints.Delivered {
		failed--
	}
	for n := 1; n <= failed; n++ {
		if _, err := b.pool.Exec(t.Context(), `INSERT INTO delivery_attempts (delivery_id, attempt, endpoint_id, at, status, latency_ms, error_class, error, answer)
VALUES ($1, $2, $3, $4, 503, 10, 'status', 'status 503', 'busy')`, id, n, r.endpoint, r.createdAt.Add(time.Duration(n)*time.Millisecond)); err != nil {
			t.Fatal(err)
		}
	}
	return id
}

func (b *deliveryBundle) state(t *testing.T, id int64) (endpoints.DeliveryState, bool) {
	t.Helper()
	var (
		s   endpoints.DeliveryState
		due bool
	)
	if err := b.pool.QueryRow(t.Context(), `SELECT state, next_at <= now() FROM deliveries WHERE id = $1`, id).Scan(&s, &due); err != nil {
		t.Fatal(err)
	}
	return s, due
}

func (b *deliveryBundle) audited(t *testing.T, action, target string) int {
	t.Helper()
	var n int
	if err := b.pool.QueryRow(t.Context(), `SELECT count(*) FROM admin_audit WHERE action = $1 AND target_id = $2 AND outcome = 'ok'`,
		action, target).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func deliveryIDs(ds []endpoints.Delivery) []int64 {
	out := make([]int64, len(ds))
	for i, d := range ds {
		out[i] = d.ID
	}
	return out
}

func TestDeliveriesListFiltersAndPagesNewestFirst(t *testing.T) {
	t.Parallel()
	b := setupDeliveries(t)
	ctx := t.Context()
	other := b.newTenant(t)
	otherEndpoint := b.newEndpoint(t, other)
	secondEndpoint := b.newEndpoint(t, b.tenant)
	old := time.Now().Add(-2 * time.Hour)
	inbox := int64(77)
	d1 := b.insert(t, row{state: endpoints.Delivered, attempts: 1, createdAt: old, inboxID: &inbox, eventID: "evt_shared"})
	d2 := b.insert(t, row{state: endpoints.Dead, attempts: 3})
	d3 := b.insert(t, row{state: endpoints.Pending, endpoint: secondEndpoint, tenant: b.tenant})
	d4 := b.insert(t, row{state: endpoints.Delivered, attempts: 2, endpoint: otherEndpoint, tenant: other, eventID: "evt_shared"})

	cases := []struct {
		name string
		f    endpoints.DeliveryFilter
		want []int64
	}{
		{"everything", endpoints.DeliveryFilter{}, []int64{d4, d3, d2, d1}},
		{"the tenant's", endpoints.DeliveryFilter{TenantID: b.tenant}, []int64{d3, d2, d1}},
		{"an endpoint's", endpoints.DeliveryFilter{EndpointID: b.endpoint}, []int64{d2, d1}},
		{"another tenant's endpoint within the scope", endpoints.DeliveryFilter{TenantID: b.tenant, EndpointID: otherEndpoint}, []int64{}},
		{"dead", endpoints.DeliveryFilter{State: endpoints.Dead}, []int64{d2}},
		{"an event's", endpoints.DeliveryFilter{EventID: "evt_shared"}, []int64{d4, d1}},
		{"an event's in scope", endpoints.DeliveryFilter{EventID: "evt_shared", TenantID: other}, []int64{d4}},
		{"an inbox row's", endpoints.DeliveryFilter{InboxID: inbox}, []int64{d1}},
		{"since", endpoints.DeliveryFilter{Since: old.Add(time.Minute)}, []int64{d4, d3, d2}},
		{"until", endpoints.DeliveryFilter{Until: old.Add(time.Minute)}, []int64{d1}},
	}
	for _, c := range cases {
		got, next, err := b.store.ListDeliveries(ctx, c.f)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if fmt.Sprint(deliveryIDs(got)) != fmt.Sprint(c.want) || next != "" {
			t.Errorf("%s: %v (next %q), want %v", c.name, deliveryIDs(got), next, c.want)
		}
	}

	var paged []int64
	f := endpoints.DeliveryFilter{Limit: 3}
	for range 3 {
		page, next, err := b.store.ListDeliveries(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		paged = append(paged, deliveryIDs(page)...)
		if next == "" {
			break
		}
		f.After = next
	}
	if fmt.Sprint(paged) != fmt.Sprint([]int64{d4, d3, d2, d1}) {
		t.Errorf("pages of 3: %v", paged)
	}

	for _, bad := range []endpoints.DeliveryFilter{{State: "lost"}, {EndpointID: "NOT-A-UUID"}, {After: "x"}, {Limit: 501},
		{Since: old, Until: old}} {
		if _, _, err := b.store.ListDeliveries(ctx, bad); !errors.Is(err, refusal.ErrInvalid) {
			t.Errorf("%+v: %v, want invalid", bad, err)
		}
	}
}

func TestADeliveryShowsItsFailedAttemptsAndItsSuccess(t *testing.T) {
	t.Parallel()
	b := setupDeliveries(t)
	ctx := t.Context()
	delivered := b.insert(t, row{state: endpoints.Delivered, attempts: 3})
	firstTime := b.insert(t, row{state: endpoints.Delivered, attempts: 1})
	dead := b.insert(t, row{state: endpoints.Dead, attempts: 2})

	d, err := b.store.Delivery(ctx, delivered)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.History) != 3 || !d.History[2].OK() || d.History[2].Attempt != 3 || d.History[2].LatencyMS != 42 || d.History[0].OK() ||
		d.History[0].ErrorClass != "status" || d.History[1].Attempt != 2 {
		t.Errorf("delivered after two failures: %+v", d.History)
	}
	if d.NextAt != nil || d.State != endpoints.Delivered || d.LastStatus != 200 {
		t.Errorf("delivered: %+v", d)
	}
	if d, err := b.store.Delivery(ctx, firstTime); err != nil || len(d.History) != 1 || !d.History[0].OK() || d.History[0].Attempt != 1 {
		t.Errorf("a first-attempt success: %+v, %v", d.History, err)
	}
	if d, err := b.store.Delivery(ctx, dead); err != nil || len(d.History) != 2 || d.History[1].OK() {
		t.Errorf("dead: %+v, %v", d.History, err)
	}
	if _, err := b.store.Delivery(ctx, dead+1000); !errors.Is(err, refusal.ErrNotFound) {
		t.Errorf("unknown delivery: %v", err)
	}
	if tenant, err := b.store.TenantOfDelivery(ctx, dead); err != nil || tenant != b.tenant {
		t.Errorf("tenant of delivery: %q, %v", tenant, err)
	}
	if _, err := b.store.TenantOfDelivery(ctx, dead+1000); !errors.Is(err, refusal.ErrNotFound) {
		t.Errorf("tenant of an unknown delivery: %v", err)
	}
}

func TestRetryMakesADeliveryPendingNowAndIsAudited(t *testing.T) {
	t.Parallel()
	b := setupDeliveries(t)
	ctx := t.Context()
	for _, s := range []endpoints.DeliveryState{endpoints.Dead, endpoints.Delivered, endpoints.Pending} {
		id := b.insert(t, row{state: s, attempts: 2})
		d, err := b.store.Retry(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if state, due := b.state(t, id); state != endpoints.Pending || !due || d.State != endpoints.Pending || d.Attempts != 2 {
			t.Errorf("%s retried: %s, due %v (%+v)", s, state, due, d)
		}
		if n := b.audited(t, "delivery.retry", fmt.Sprint(id)); n != 1 {
			t.Errorf("%s retried: %d audit rows", s, n)
		}
	}
	if _, err := b.store.Retry(ctx, 1<<40); !errors.Is(err, refusal.ErrNotFound) {
		t.Errorf("retry of an unknown delivery: %v", err)
	}
}

func TestReplaySendsAnEndpointsWindowAgain(t *testing.T) {
	t.Parallel()
	b := setupDeliveries(t)
	ctx := t.Context()
	now := time.Now()
	since, until := now.Add(-3*time.Hour), now.Add(-time.Hour)
	before := b.insert(t, row{state: endpoints.Delivered, attempts: 1, createdAt: since.Add(-time.Second)})
	in1 := b.insert(t, row{state: endpoints.Delivered, attempts: 1, createdAt: since})
	in2 := b.insert(t, row{state: endpoints.Dead, attempts: 5, createdAt: since.Add(time.Hour)})
	inPending := b.insert(t, row{state: endpoints.Pending, createdAt: since.Add(time.Hour)})
	atUntil := b.insert(t, row{state: endpoints.Delivered, attempts: 1, createdAt: until})
	otherEndpoint := b.insert(t, row{state: endpoints.Delivered, attempts: 1, createdAt: since.Add(time.Minute),
		endpoint: b.newEndpoint(t, b.tenant), tenant: b.tenant})

	// The dry run counts what the replay then does, and changes nothing.
	count, err := b.store.CountReplay(ctx, endpoints.ReplayWindow{EndpointID: b.endpoint, Since: since, Until: until})
	if err != nil {
		t.Fatal(err)
	}
	if count.Replayable != 2 || count.More || count.TenantID != b.tenant {
		t.Errorf("dry run: %+v, want 2 replayable", count)
	}
	if s, _ := b.state(t, in2); s != endpoints.Dead {
		t.Errorf("the dry run moved a delivery to %s", s)
	}
	got, err := b.store.Replay(ctx, endpoints.ReplayWindow{EndpointID: b.endpoint, Since: since, Until: until})
	if err != nil {
		t.Fatal(err)
	}
	if got.Replayed != 2 || got.NextSince != nil || got.TenantID != b.tenant {
		t.Errorf("replay: %+v, want 2 replayed", got)
	}
	for id, want := range map[int64]endpoints.DeliveryState{before: endpoints.Delivered, in1: endpoints.Pending, in2: endpoints.Pending,
		atUntil: endpoints.Delivered, otherEndpoint: endpoints.Delivered} {
		if s, _ := b.state(t, id); s != want {
			t.Errorf("delivery %d: %s, want %s", id, s, want)
		}
	}
	if _, due := b.state(t, in2); !due {
		t.Error("a replayed delivery is not due now")
	}
	if _, due := b.state(t, inPending); due {
		t.Error("a pending delivery's schedule (maybe a lease) was moved")
	}
	if n := b.audited(t, "endpoint.replay", b.endpoint); n != 1 {
		t.Errorf("%d audit rows", n)
	}

	other := b.newTenant(t)
	refused := []endpoints.ReplayWindow{
		{EndpointID: b.endpoint, Since: until, Until: since},
		{EndpointID: b.endpoint, Since: now.Add(-8 * 24 * time.Hour), Until: now},
		{EndpointID: b.endpoint, Since: since, Until: until, Horizon: time.Hour},
		{EndpointID: b.endpoint, Until: until},
		{EndpointID: "nope", Since: since, Until: until},
	}
	for _, w := range refused {
		if _, err := b.store.Replay(ctx, w); !errors.Is(err, refusal.ErrInvalid) {
			t.Errorf("%+v: %v, want invalid", w, err)
		}
		if _, err := b.store.CountReplay(ctx, w); !errors.Is(err, refusal.ErrInvalid) {
			t.Errorf("dry run %+v: %v, want invalid", w, err)
		}
	}
	for _, w := range []endpoints.ReplayWindow{
		{EndpointID: b.endpoint, Since: since, Until: until, TenantID: other},
		{EndpointID: "00000000-0000-0000-0000-000000000000", Since: since, Until: until},
	} {
		if _, err := b.store.Replay(ctx, w); !errors.Is(err, refusal.ErrNotFound) {
			t.Errorf("%+v: %v, want not found", w, err)
		}
		if _, err := b.store.CountReplay(ctx, w); !errors.Is(err, refusal.ErrNotFound) {
			t.Errorf("dry run %+v: %v, want not found", w, err)
		}
	}
}

func TestReplayOfAWideWindowStopsAtItsCapAndSaysWhereToGoOn(t *testing.T) {
	t.Parallel()
	b := setupDeliveries(t)
	ctx := t.Context()
	start := time.Now().Add(-time.Hour).Truncate(time.Microsecond)
	if _, err := b.pool.Exec(ctx, `
INSERT INTO deliveries (endpoint_id, tenant_id, webhook_id, partition_key, state, attempts, created_at, event_id, event_type, source, topic, partition, "offset")
SELECT $1, $2, 'msg_' || n, 'k', 'delivered', 1, $3::timestamptz + n * interval '1 millisecond', 'evt_' || n, 't', 's', 'sluice.t', 0, n
FROM generate_series(1, $4) n`, b.endpoint, b.tenant, start, endpoints.MaxReplay+5); err != nil {
		t.Fatal(err)
	}
	w := endpoints.ReplayWindow{EndpointID: b.endpoint, Since: start, Until: start.Add(time.Hour)}
	if count, err := b.store.CountReplay(ctx, w); err != nil || count.Replayable != endpoints.MaxReplay || !count.More {
		t.Errorf("dry run of a wide window: %+v, %v; want the cap and more", count, err)
	}
	got, err := b.store.Replay(ctx, w)
	if err != nil {
		t.Fatal(err)
	}
	if got.Replayed != endpoints.MaxReplay || got.NextSince == nil || !got.NextSince.Equal(start.Add(endpoints.MaxReplay*time.Millisecond)) {
		t.Fatalf("first call: %+v", got)
	}
	w.Since = *got.NextSince
	if got, err = b.store.Replay(ctx, w); err != nil || got.Replayed != 5 || got.NextSince != nil {
		t.Fatalf("second call: %+v, %v", got, err)
	}
	var left int
	if err := b.pool.QueryRow(ctx, `SELECT count(*) FROM deliveries WHERE endpoint_id = $1 AND state <> 'pending'`, b.endpoint).Scan(&left); err != nil || left != 0 {
		t.Errorf("%d left unreplayed (%v)", left, err)
	}
}
