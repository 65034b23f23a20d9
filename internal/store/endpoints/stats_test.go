package endpoints_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/refusal"
	"github.com/sluicehq/sluice/internal/store/endpoints"
)

// delivery writes a delivery of endpoint e as the fan-out and the
// deliverer would, created ago, in state; a failed attempt (status 503)
// when failedAt is not zero.
func delivery(t *testing.T, e endpoints.Endpoint, state string, ago time.Duration, failedAt time.Time) int64 {
	t.Helper()
	ctx := context.Background()
	var id int64
	err := pool.QueryRow(ctx, `INSERT INTO deliveries (endpoint_id, tenant_id, webhook_id, partition_key, state, created_at, delivered_at,
  event_id, event_type, source, topic, partition, "offset")
VALUES ($1, $2, 'msg_' || gen_random_uuid(), 'k', $3, now() - $4::interval, CASE WHEN $3 = 'delivered' THEN now() - $4::interval END,
  'evt', 't.x', '/s', 'topic', 0, 0) RETURNING id`, e.ID, e.TenantID, state, ago).Scan(&id)
	if err != nil {
		t.Fatal(err)
	}
	if state == "pending" {
		if _, err := pool.Exec(ctx, `INSERT INTO pending_deliveries (endpoint_id, id) VALUES ($1, $2)`, e.ID, id); err != nil {
			t.Fatal(err)
		}
	}
	if !failedAt.IsZero() {
		if _, err := pool.Exec(ctx, `INSERT INTO delivery_attempts (delivery_id, attempt, endpoint_id, at, status, error_class, error)
VALUES ($1, 1, $2, $3, 503, 'status', 'Service Unavailable')`, id, e.ID, failedAt); err != nil {
			t.Fatal(err)
		}
	}
	return id
}

func TestEndpointFiguresCountItsDeliveries(t *testing.T) {
	t.Parallel()
	s := newStore(t, endpoints.Limits{})
	ctx := context.Background()
	tenant := newTenant(t)
	e, _ := create(t, s, endpoints.New{TenantID: tenant})
	other, _ := create(t, s, endpoints.New{TenantID: tenant})
	empty, err := s.Stats(ctx, e.ID)
	if err != nil {
		t.Fatal(err)
	}
	if empty != (endpoints.Stats{}) {
		t.Errorf("figures of an endpoint without deliveries: %+v", empty)
	}
	failed := time.Now().Add(-time.Minute).UTC().Truncate(time.Microsecond)
	for range 3 {
		delivery(t, e, "delivered", 2*time.Hour, time.Time{})
	}
	delivery(t, e, "dead", 3*time.Hour, time.Time{})
	delivery(t, e, "pending", time.Hour, failed)
	delivery(t, e, "pending", time.Minute, time.Time{})
	delivery(t, other, "pending", 10*time.Hour, time.Now())
	st, err := s.Stats(ctx, e.ID)
	if err != nil {
		t.Fatal(err)
	}
	if st.Window != 6 || st.Delivered != 3 || st.Dead != 1 || st.Pending != 2 || st.PendingAtLeast {
		t.Errorf("figures %+v: want 6 read, 3 delivered, 1 dead, 2 pending", st)
	}
	if st.OldestPendingAgeSeconds < 3590 || st.OldestPendingAgeSeconds > 3700 {
		t.Errorf("oldest pending %.0f s old, want an hour (the other endpoint's are not its own)", st.OldestPendingAgeSeconds)
	}
	if st.LastError != "status: Service Unavailable" || st.LastErrorStatus != 503 || st.LastErrorAt == nil || !st.LastErrorAt.Equal(failed) {
		t.Errorf("last error %q %d %v, want the 503 a minute ago", st.LastError, st.LastErrorStatus, st.LastErrorAt)
	}
	if st.LastAttemptAt == nil || !st.LastAttemptAt.Equal(failed) {
		t.Errorf("last attempt %v, want the failure a minute ago (the deliveries are older)", st.LastAttemptAt)
	}
	if _, err := s.Stats(ctx, "00000000-0000-4000-8000-000000000000"); !errors.Is(err, refusal.ErrNotFound) {
		t.Errorf("unknown endpoint: %v", err)
	}
	if err := s.DeleteEndpoint(ctx, e.ID); err != nil {
		t.Fatal(err)
	}
	if n := count(t, `SELECT count(*) FROM deliveries WHERE endpoint_id = $1`, e.ID); n != 0 {
		t.Errorf("%d deliveries left after the endpoint's delete, want them gone with it", n)
	}
}

func TestEndpointFiguresAreBounded(t *testing.T) {
	t.Parallel()
	s := newStore(t, endpoints.Limits{})
	e, _ := create(t, s, endpoints.New{TenantID: newTenant(t)})
	if _, err := pool.Exec(context.Background(), `INSERT INTO deliveries (endpoint_id, tenant_id, webhook_id, partition_key, event_id, event_type, source, topic, partition, "offset")
SELECT $1, $2, 'msg_' || g, 'k', 'evt', 't.x', '/s', 'topic', 0, g FROM generate_series(1, $3::int) g`, e.ID, e.TenantID, endpoints.StatsWindow+5); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(context.Background(), `INSERT INTO pending_deliveries (endpoint_id, id) SELECT endpoint_id, id FROM deliveries WHERE endpoint_id = $1`, e.ID); err != nil {
		t.Fatal(err)
	}
	st, err := s.Stats(context.Background(), e.ID)
	if err != nil {
		t.Fatal(err)
	}
	if st.Pending != endpoints.StatsWindow || !st.PendingAtLeast || st.Window != endpoints.StatsWindow {
		t.Errorf("figures %s: want pending capped at %d, at least", fmt.Sprintf("%+v", st), endpoints.StatsWindow)
	}
}
