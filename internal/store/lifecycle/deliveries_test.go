package lifecycle_test

import (
	"context"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/store/lifecycle"
)

// newEndpoint makes a tenant with an endpoint (and a secret of it).
func (b *bundle) newEndpoint(t *testing.T) (tenant, endpoint string) {
	t.Helper()
	ctx := context.Background()
	if err := b.pool.QueryRow(ctx, `INSERT INTO tenants (name) VALUES ('deliveries') RETURNING id::text`).Scan(&tenant); err != nil {
		t.Fatal(err)
	}
	if err := b.pool.QueryRow(ctx, `INSERT INTO endpoints (tenant_id, url, filters) VALUES ($1, 'https://example.com/h', '{*}') RETURNING id::text`,
		tenant).Scan(&endpoint); err != nil {
		t.Fatal(err)
	}
	if _, err := b.pool.Exec(ctx, `INSERT INTO endpoint_secrets (endpoint_id, key_id, ciphertext) VALUES ($1, 'k1', '\x00')`, endpoint); err != nil {
		t.Fatal(err)
	}
	return tenant, endpoint
}

// deliver writes a delivery of inbox row inboxID (nil: one with its own
// body) to endpoint, created at, with failed attempts, as the fan-out and
// the deliverer would; it returns its id.
func (b *bundle) deliver(t *testing.T, tenant, endpoint string, inboxID *int64, payload string, state string, failed int, at time.Time) int64 {
	t.Helper()
	ctx := context.Background()
	var id int64
	var body []byte
	if payload != "" {
		body = []byte(payload)
	}
	if err := b.pool.QueryRow(ctx, `
INSERT INTO deliveries (endpoint_id, tenant_id, webhook_id, partition_key, state, attempts, created_at, inbox_id, payload,
                        event_id, event_type, source, topic, partition, "offset")
VALUES ($1, $2, gen_random_uuid()::text, 'k', $3, $4, $5, $6, $7, 'evt', 'test.event', 's', 'sluice.test', 0, 1)
RETURNING id`, endpoint, tenant, state, failed, at, inboxID, body).Scan(&id); err != nil {
		t.Fatal(err)
	}
	for n := 1; n <= failed; n++ {
		if _, err := b.pool.Exec(ctx, `INSERT INTO delivery_attempts (delivery_id, attempt, endpoint_id, error_class) VALUES ($1, $2, $3, 'timeout')`,
			id, n, endpoint); err != nil {
			t.Fatal(err)
		}
	}
	return id
}

func TestDeliveriesAgeOutPastThePayloadHorizonWhateverTheirState(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tenant, endpoint := b.newEndpoint(t)
	old := b.clock().Add(-3 * time.Minute) // the payload horizon is 2 minutes
	for _, state := range []string{"delivered", "dead", "pending"} {
		b.deliver(t, tenant, endpoint, nil, "", state, 2, old)
	}
	young := b.deliver(t, tenant, endpoint, nil, "", "delivered", 1, b.clock().Add(-time.Minute))
	b.configure(func(c *lifecycle.Config) { c.KeyBatch = 2 }) // more than one batch
	r := b.pass(t)
	if r.DeliveriesDeleted != 3 || r.DeliveryAttemptsDeleted != 6 {
		t.Errorf("pass: %+v, want the 3 old deliveries and their 6 attempts deleted", r)
	}
	if n := b.count(t, `SELECT count(*) FROM deliveries`); n != 1 {
		t.Errorf("%d deliveries left, want the young one", n)
	}
	if n := b.count(t, `SELECT count(*) FROM delivery_attempts WHERE delivery_id = $1`, young); n != 1 {
		t.Errorf("the young delivery has %d attempts left, want 1", n)
	}
	if got := metric(t, b.reg, "sluice_lifecycle_aged_deleted_total", "deliveries"); got != 3 {
		t.Errorf("sluice_lifecycle_aged_deleted_total{table=deliveries} = %v, want 3", got)
	}
	if got := metric(t, b.reg, "sluice_lifecycle_aged_deleted_total", "delivery_attempts"); got != 6 {
		t.Errorf("sluice_lifecycle_aged_deleted_total{table=delivery_attempts} = %v, want 6", got)
	}
}

func TestErasingATenantDeletesItsEndpointsAndDeliveries(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.pass(t) // partitions for the clock's now
	tenant, endpoint := b.newEndpoint(t)
	otherTenant, otherEndpoint := b.newEndpoint(t)
	id := b.accept(t, tenant, `{"a":1}`)
	b.deliver(t, tenant, endpoint, &id, "", "dead", 3, b.clock())
	b.deliver(t, tenant, endpoint, nil, `{"intent":1}`, "delivered", 0, b.clock())
	b.deliver(t, otherTenant, otherEndpoint, nil, "", "dead", 1, b.clock())

	e, err := lifecycle.EraseTenant(context.Background(), b.pool, tenant, nil)
	if err != nil {
		t.Fatal(err)
	}
	if e.Endpoints != 1 || e.Deliveries != 2 || e.DeliveryAttempts != 3 {
		t.Errorf("erased %+v, want 1 endpoint, 2 deliveries, 3 attempts", e)
	}
	for query, want := range map[string]int{
		`SELECT count(*) FROM endpoints WHERE tenant_id = $1`:                                                     0,
		`SELECT count(*) FROM deliveries WHERE tenant_id = $1`:                                                    0,
		`SELECT count(*) FROM endpoint_secrets k JOIN endpoints e ON e.id = k.endpoint_id WHERE e.tenant_id = $1`: 0,
	} {
		if n := b.count(t, query, tenant); n != want {
			t.Errorf("%s: %d", query, n)
		}
	}
	if n := b.count(t, `SELECT count(*) FROM endpoint_secrets`); n != 1 {
		t.Errorf("%d secrets left, want the other tenant's", n)
	}
	if n := b.count(t, `SELECT count(*) FROM delivery_attempts`); n != 1 {
		t.Errorf("%d attempts left, want the other tenant's", n)
	}
	if n := b.count(t, `SELECT count(*) FROM deliveries WHERE tenant_id = $1`, otherTenant); n != 1 {
		t.Errorf("the other tenant's deliveries: %d, want 1", n)
	}
}

func TestErasingASubjectDeletesTheDeliveriesOfItsEvents(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.pass(t) // partitions for the clock's now
	tenant, endpoint := b.newEndpoint(t)
	mentions := b.accept(t, tenant, `{"email":"ann@example.com"}`)
	unrelated := b.accept(t, tenant, `{"email":"bob@example.com"}`)
	b.deliver(t, tenant, endpoint, &mentions, "", "pending", 2, b.clock())
	b.deliver(t, tenant, endpoint, nil, `{"to":"ann@example.com"}`, "delivered", 0, b.clock())
	kept := b.deliver(t, tenant, endpoint, &unrelated, "", "delivered", 1, b.clock())

	e, err := lifecycle.EraseSubject(context.Background(), b.pool, tenant, "ann@example.com")
	if err != nil {
		t.Fatal(err)
	}
	if e.Events != 1 || e.Deliveries != 2 || e.DeliveryAttempts != 2 {
		t.Errorf("erased %+v, want 1 event, 2 deliveries, 2 attempts", e)
	}
	if n := b.count(t, `SELECT count(*) FROM deliveries WHERE id <> $1`, kept); n != 0 {
		t.Errorf("%d deliveries mentioning the subject left", n)
	}
	if n := b.count(t, `SELECT count(*) FROM delivery_attempts WHERE delivery_id = $1`, kept); n != 1 {
		t.Errorf("the unrelated delivery's attempts: %d, want 1", n)
	}
}
