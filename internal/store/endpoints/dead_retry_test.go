package endpoints_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/refusal"
	"github.com/sluicehq/sluice/internal/store/endpoints"
)

// A bulk retry's dry run counts exactly what the retry then sends again:
// for each selection (type, window, error class), on a fresh endpoint
// holding the same deliveries, the count equals the retried, and exactly
// the selected dead deliveries are pending, due now, afterwards.
func TestBulkRetryRetriesWhatItsDryRunCounted(t *testing.T) {
	t.Parallel()
	b := setupDeliveries(t)
	ctx := t.Context()
	now := time.Now()
	since, until := now.Add(-3*time.Hour), now.Add(-time.Hour)
	type spec struct {
		name, typ, class string
		state            endpoints.DeliveryState
		at               time.Time
	}
	specs := []spec{
		{"paid-status", "stripe.invoice.paid", "status", endpoints.Dead, since.Add(time.Minute)},
		{"paid-timeout", "stripe.invoice.paid", "timeout", endpoints.Dead, since.Add(2 * time.Minute)},
		{"failed-connect", "stripe.invoice.payment_failed", "connect", endpoints.Dead, since.Add(3 * time.Minute)},
		{"refund-status", "stripe.charge.refunded", "status", endpoints.Dead, since.Add(4 * time.Minute)},
		{"order-tls", "hmac.order.placed", "tls", endpoints.Dead, since.Add(5 * time.Minute)},
		{"paid-before", "stripe.invoice.paid", "status", endpoints.Dead, since.Add(-time.Second)},
		{"paid-at-until", "stripe.invoice.paid", "status", endpoints.Dead, until},
		{"paid-delivered", "stripe.invoice.paid", "status", endpoints.Delivered, since.Add(6 * time.Minute)},
		{"paid-pending", "stripe.invoice.paid", "status", endpoints.Pending, since.Add(7 * time.Minute)},
		// Its last attempt timed out, an earlier one was refused.
		{"paid-last-timeout", "stripe.invoice.paid", "timeout", endpoints.Dead, since.Add(8 * time.Minute)},
		{"invoice-bare", "stripe.invoice", "status", endpoints.Dead, since.Add(9 * time.Minute)},
	}
	fill := func(endpoint string) map[string]int64 {
		ids := map[string]int64{}
		for _, s := range specs {
			id := b.insert(t, row{endpoint: endpoint, tenant: b.tenant, state: s.state, attempts: 3, createdAt: s.at})
			if _, err := b.pool.Exec(ctx, `UPDATE deliveries SET event_type = $2 WHERE id = $1`, id, s.typ); err != nil {
				t.Fatal(err)
			}
			if _, err := b.pool.Exec(ctx, `UPDATE delivery_attempts SET error_class = $2 WHERE delivery_id = $1 AND attempt = (SELECT max(attempt) FROM delivery_attempts WHERE delivery_id = $1)`,
				id, s.class); err != nil {
				t.Fatal(err)
			}
			ids[s.name] = id
		}
		return ids
	}
	for _, c := range []struct {
		typ, class string
		want       []string
	}{
		{"", "", []string{"failed-connect", "invoice-bare", "order-tls", "paid-last-timeout", "paid-status", "paid-timeout", "refund-status"}},
		{"*", "", []string{"failed-connect", "invoice-bare", "order-tls", "paid-last-timeout", "paid-status", "paid-timeout", "refund-status"}},
		{"stripe.invoice.paid", "", []string{"paid-last-timeout", "paid-status", "paid-timeout"}},
		{"stripe.invoice.*", "", []string{"failed-connect", "paid-last-timeout", "paid-status", "paid-timeout"}},
		{"stripe.*", "status", []string{"invoice-bare", "paid-status", "refund-status"}},
		{"", "timeout", []string{"paid-last-timeout", "paid-timeout"}},
		{"stripe.invoice.paid", "timeout", []string{"paid-last-timeout", "paid-timeout"}},
		{"hmac.order.*", "tls", []string{"order-tls"}},
		{"", "dns", nil},
		{"github.*", "", nil},
	} {
		endpoint := b.newEndpoint(t, b.tenant)
		ids := fill(endpoint)
		sel := endpoints.DeadSelection{ReplayWindow: endpoints.ReplayWindow{EndpointID: endpoint, Since: since, Until: until},
			EventType: c.typ, ErrorClass: c.class}
		name := fmt.Sprintf("type %q class %q", c.typ, c.class)
		count, err := b.store.CountDead(ctx, sel)
		if err != nil {
			t.Fatal(err)
		}
		got, err := b.store.RetryDead(ctx, sel)
		if err != nil {
			t.Fatal(err)
		}
		if count.Retryable != got.Retried || got.Retried != int64(len(c.want)) || count.More || got.NextSince != nil {
			t.Errorf("%s: dry run %d, retried %d, want %d", name, count.Retryable, got.Retried, len(c.want))
		}
		var retried []string
		for n, id := range ids {
			state, due := b.state(t, id)
			if state == endpoints.Pending && due {
				retried = append(retried, n)
			}
		}
		slices.Sort(retried)
		if !slices.Equal(retried, c.want) {
			t.Errorf("%s: pending and due after: %v, want %v", name, retried, c.want)
		}
		if n := b.audited(t, "endpoint.retry_dead", endpoint); n != 1 {
			t.Errorf("%s: %d audit rows", name, n)
		}
	}
	for _, sel := range []endpoints.DeadSelection{
		{ReplayWindow: endpoints.ReplayWindow{EndpointID: b.endpoint, Since: since, Until: until}, EventType: "Stripe.Invoice"},
		{ReplayWindow: endpoints.ReplayWindow{EndpointID: b.endpoint, Since: since, Until: until}, ErrorClass: "bad"},
		{ReplayWindow: endpoints.ReplayWindow{EndpointID: b.endpoint, Since: until, Until: since}},
	} {
		if _, err := b.store.CountDead(ctx, sel); !errors.Is(err, refusal.ErrInvalid) {
			t.Errorf("dry run %+v: %v, want invalid", sel, err)
		}
		if _, err := b.store.RetryDead(ctx, sel); !errors.Is(err, refusal.ErrInvalid) {
			t.Errorf("%+v: %v, want invalid", sel, err)
		}
	}
	other := b.newTenant(t)
	sel := endpoints.DeadSelection{ReplayWindow: endpoints.ReplayWindow{EndpointID: b.endpoint, Since: since, Until: until, TenantID: other}}
	if _, err := b.store.RetryDead(ctx, sel); !errors.Is(err, refusal.ErrNotFound) {
		t.Errorf("another tenant's endpoint: %v, want not found", err)
	}
}
