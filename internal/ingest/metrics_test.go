package ingest_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/ingest"
)

// counter reads one series of a counter from the service's registry.
func (b *bundle) counter(t *testing.T, name string, labels map[string]string) float64 {
	t.Helper()
	families, err := b.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var v float64
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	series:
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if want, ok := labels[l.GetName()]; ok && want != l.GetValue() {
					continue series
				}
			}
			v += m.GetCounter().GetValue() + float64(m.GetHistogram().GetSampleCount())
		}
	}
	return v
}

// Requests are counted once each, by the source's kind, the status they
// were answered with and their outcome, so an on-call can tell a provider's
// failing signatures from a database that refuses commits.
func TestRequestsAreCountedByKindStatusAndOutcome(t *testing.T) {
	t.Parallel()
	b := setup(t, ingest.Config{})
	first := paid("evt_m0", "in_m0")
	for i := range 5 {
		body := first
		if i > 0 {
			body = paid(fmt.Sprintf("evt_m%d", i), fmt.Sprintf("in_m%d", i))
		}
		if status := b.send(t, body, nil); status != http.StatusAccepted {
			t.Fatalf("status %d", status)
		}
	}
	// The same bytes again: bodies carry the current second, so a body
	// built anew could differ and be a conflict.
	for range 2 {
		b.send(t, first, nil)
	}
	for range 3 {
		b.send(t, paid("evt_bad", "in_bad"), func(r *http.Request) { r.Header.Set("Stripe-Signature", "t=1,v1=00") })
	}
	b.post(t, "/v1/ingest/00000000-0000-0000-0000-000000000000", paid("evt_x", "in_x"), stripeHeader(b.secret, paid("evt_x", "in_x"), time.Now()))

	for _, c := range []struct {
		labels map[string]string
		want   float64
	}{
		{map[string]string{"kind": "stripe", "code": "202", "outcome": "accepted"}, 5},
		{map[string]string{"kind": "stripe", "code": "200", "outcome": "duplicate"}, 2},
		{map[string]string{"kind": "stripe", "code": "401", "outcome": "bad_signature"}, 3},
		{map[string]string{"kind": "unknown", "code": "404", "outcome": "unknown_source"}, 1},
	} {
		if got := b.counter(t, "sluice_ingest_requests_total", c.labels); got != c.want {
			t.Errorf("requests %v = %v, want %v", c.labels, got, c.want)
		}
	}
	if got := b.counter(t, "sluice_ingest_request_seconds", map[string]string{"kind": "stripe"}); got != 10 {
		t.Errorf("latency observations for stripe = %v, want 10", got)
	}
}

// Per-tenant counts exist only when asked for, and only for tenants that
// exist: a request for an unknown source adds no tenant series.
func TestRequestsByTenantOnlyWhenAskedFor(t *testing.T) {
	t.Parallel()
	off := setup(t, ingest.Config{})
	off.send(t, paid("evt_t0", "in_t0"), nil)
	if got := off.counter(t, "sluice_ingest_tenant_requests_total", nil); got != 0 {
		t.Errorf("per-tenant series without the flag: %v requests counted", got)
	}

	b := setup(t, ingest.Config{TenantMetrics: true})
	for i := range 3 {
		if status := b.send(t, paid(fmt.Sprintf("evt_t%d", i), fmt.Sprintf("in_t%d", i)), nil); status != http.StatusAccepted {
			t.Fatalf("status %d", status)
		}
	}
	b.send(t, paid("evt_bad", "in_bad"), func(r *http.Request) { r.Header.Set("Stripe-Signature", "t=1,v1=00") })
	b.post(t, "/v1/ingest/00000000-0000-0000-0000-000000000000", paid("evt_x", "in_x"), stripeHeader(b.secret, paid("evt_x", "in_x"), time.Now()))
	for _, c := range []struct {
		labels map[string]string
		want   float64
	}{
		{map[string]string{"tenant": b.tenantID, "kind": "stripe", "code": "202"}, 3},
		{map[string]string{"tenant": b.tenantID, "kind": "stripe", "code": "401"}, 1},
		{nil, 4}, // the unknown source is in no tenant's series
	} {
		if got := b.counter(t, "sluice_ingest_tenant_requests_total", c.labels); got != c.want {
			t.Errorf("tenant requests %v = %v, want %v", c.labels, got, c.want)
		}
	}
}
