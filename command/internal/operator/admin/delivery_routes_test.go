package admin_test

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/command/internal/operator/admintoken"
	"github.com/sluicehq/sluice/internal/store/endpoints"
)

// deliveryHorizon is the payload horizon the test listener's replays are
// bounded by.
const deliveryHorizon = 48 * time.Hour

// seedDelivery gives w an endpoint and a dead delivery of its event, with
// one failed attempt, as the fan-out and the deliverer would leave them.
func (b *bundle) seedDelivery(t *testing.T, w *world) {
	t.Helper()
	ctx := t.Context()
	var id int64
	if err := b.pool.QueryRow(ctx, `
INSERT INTO deliveries (endpoint_id, tenant_id, webhook_id, partition_key, state, attempts, last_status, last_error, latency_ms,
                        inbox_id, event_id, event_type, source, topic, partition, "offset")
SELECT $1, $2, 'msg_' || i.id, 'subscription/' || i.object_id, 'dead', 1, 500, 'status 500', 12, i.id, i.event_id, i.event_type,
       's', 'sluice.subscriptions', 0, 1
FROM inbox i WHERE i.id = $3
RETURNING id`, w.endpoint, w.tenant, w.inboxID).Scan(&id); err != nil {
		t.Fatal(err)
	}
	if _, err := b.pool.Exec(ctx, `INSERT INTO delivery_attempts (delivery_id, attempt, endpoint_id, status, latency_ms, error_class, error)
VALUES ($1, 1, $2, 500, 12, 'status', 'status 500')`, id, w.endpoint); err != nil {
		t.Fatal(err)
	}
	w.delivery = strconv.FormatInt(id, 10)
}

type deliveryList struct {
	Items      []endpoints.Delivery `json:"items"`
	NextCursor string               `json:"next_cursor"`
}

func TestDeliveriesRoutesKeepAScopedTokenInItsTenant(t *testing.T) {
	t.Parallel()
	b := setup(t)
	a, other := b.newWorld(t), b.newWorld(t)
	read, act := b.token(t, admintoken.RoleRead, a.tenant), b.token(t, admintoken.RoleOperate, a.tenant)

	status, got := b.do(t, read, http.MethodGet, "/admin/v1/deliveries", nil)
	if l := decode[deliveryList](t, got); status != http.StatusOK || len(l.Items) != 1 || l.Items[0].ID != atoi(t, a.delivery) {
		t.Errorf("scoped list: %d %s", status, got)
	}
	status, got = b.do(t, read, http.MethodGet, "/admin/v1/deliveries?endpoint_id="+other.endpoint, nil)
	if l := decode[deliveryList](t, got); status != http.StatusOK || len(l.Items) != 0 {
		t.Errorf("scoped list of another tenant's endpoint: %d %s, want an empty list", status, got)
	}
	if status, got := b.do(t, read, http.MethodGet, "/admin/v1/deliveries?tenant_id="+other.tenant, nil); status != http.StatusNotFound {
		t.Errorf("scoped list of another tenant: %d %s, want 404", status, got)
	}
	if status, got := b.do(t, read, http.MethodGet, "/admin/v1/deliveries/"+other.delivery, nil); status != http.StatusNotFound {
		t.Errorf("another tenant's delivery: %d %s, want 404", status, got)
	}
	if status, got := b.do(t, act, http.MethodPost, "/admin/v1/deliveries/"+other.delivery+"/retry", nil); status != http.StatusNotFound {
		t.Errorf("retry of another tenant's delivery: %d %s, want 404", status, got)
	}
	now := time.Now().UTC()
	window := map[string]any{"endpoint_id": other.endpoint, "since": now.Add(-time.Hour), "until": now.Add(time.Minute)}
	if status, got := b.do(t, act, http.MethodPost, "/admin/v1/deliveries/replay", window); status != http.StatusNotFound {
		t.Errorf("replay of another tenant's endpoint: %d %s, want 404", status, got)
	}
	countOf := func(w map[string]any) string {
		return fmt.Sprintf("/admin/v1/deliveries/replay/count?endpoint_id=%s&since=%s&until=%s", w["endpoint_id"],
			w["since"].(time.Time).Format(time.RFC3339), w["until"].(time.Time).Format(time.RFC3339))
	}
	if status, got := b.do(t, read, http.MethodGet, countOf(window), nil); status != http.StatusNotFound {
		t.Errorf("dry run of a replay of another tenant's endpoint: %d %s, want 404", status, got)
	}
	if n := b.count(t, `SELECT count(*) FROM deliveries WHERE tenant_id = $1 AND state = 'pending'`, other.tenant); n != 0 {
		t.Errorf("the other tenant's deliveries moved: %d pending", n)
	}
	if n := b.count(t, `SELECT count(*) FROM admin_audit WHERE tenant_id = $1 AND action IN ('delivery.retry', 'endpoint.replay') AND outcome = 'not_found'`,
		a.tenant); n != 2 {
		t.Errorf("%d refusals audited, want 2", n)
	}

	// Its own: read, retried, replayed.
	status, got = b.do(t, read, http.MethodGet, "/admin/v1/deliveries/"+a.delivery, nil)
	if d := decode[endpoints.Delivery](t, got); status != http.StatusOK || d.State != endpoints.Dead || len(d.History) != 1 || d.History[0].Status != 500 {
		t.Errorf("own delivery: %d %s", status, got)
	}
	status, got = b.do(t, act, http.MethodPost, "/admin/v1/deliveries/"+a.delivery+"/retry", nil)
	if d := decode[endpoints.Delivery](t, got); status != http.StatusOK || d.State != endpoints.Pending {
		t.Errorf("retry: %d %s", status, got)
	}
	if _, err := b.pool.Exec(t.Context(), `UPDATE deliveries SET state = 'delivered' WHERE id = $1`, a.delivery); err != nil {
		t.Fatal(err)
	}
	window["endpoint_id"] = a.endpoint
	status, got = b.do(t, read, http.MethodGet, countOf(window), nil)
	if n := decode[endpoints.ReplayCount](t, got); status != http.StatusOK || n.Replayable != 1 || n.More || n.TenantID != a.tenant {
		t.Errorf("dry run of the replay: %d %s, want 1 replayable", status, got)
	}
	if n := b.count(t, `SELECT count(*) FROM deliveries WHERE id = $1 AND state = 'delivered'`, a.delivery); n != 1 {
		t.Errorf("the dry run moved the delivery")
	}
	status, got = b.do(t, act, http.MethodPost, "/admin/v1/deliveries/replay", window)
	if r := decode[endpoints.Replayed](t, got); status != http.StatusOK || r.Replayed != 1 || r.TenantID != a.tenant {
		t.Errorf("replay: %d %s", status, got)
	}
	for _, action := range []string{"delivery.retry", "endpoint.replay"} {
		if n := b.count(t, `SELECT count(*) FROM admin_audit WHERE tenant_id = $1 AND action = $2 AND outcome = 'ok'`, a.tenant, action); n != 1 {
			t.Errorf("%s audited %d times", action, n)
		}
	}
}

func TestDeliveriesRoutesRefuseBadInput(t *testing.T) {
	t.Parallel()
	b := setup(t)
	w := b.newWorld(t)
	root := b.token(t, admintoken.RoleOperate, "")
	now := time.Now().UTC()
	for _, c := range []struct {
		method, path string
		body         any
		want         int
	}{
		{http.MethodGet, "/admin/v1/deliveries/abc", nil, http.StatusUnprocessableEntity},
		{http.MethodGet, "/admin/v1/deliveries/0", nil, http.StatusUnprocessableEntity},
		{http.MethodGet, "/admin/v1/deliveries/999999999", nil, http.StatusNotFound},
		{http.MethodPost, "/admin/v1/deliveries/999999999/retry", nil, http.StatusNotFound},
		{http.MethodGet, "/admin/v1/deliveries?state=lost", nil, http.StatusUnprocessableEntity},
		{http.MethodGet, "/admin/v1/deliveries?endpoint_id=ABC", nil, http.StatusUnprocessableEntity},
		{http.MethodGet, "/admin/v1/deliveries?cursor=x", nil, http.StatusUnprocessableEntity},
		{http.MethodGet, "/admin/v1/deliveries?since=2026-01-02T00:00:00Z&until=2026-01-01T00:00:00Z", nil, http.StatusUnprocessableEntity},
		{http.MethodPost, "/admin/v1/deliveries/replay", map[string]any{"endpoint_id": w.endpoint, "since": now, "until": now.Add(-time.Hour)},
			http.StatusUnprocessableEntity},
		{http.MethodPost, "/admin/v1/deliveries/replay", map[string]any{"endpoint_id": w.endpoint, "since": now.Add(-deliveryHorizon - time.Hour), "until": now},
			http.StatusUnprocessableEntity},
		{http.MethodPost, "/admin/v1/deliveries/replay", map[string]any{"endpoint_id": w.endpoint, "until": now}, http.StatusUnprocessableEntity},
		{http.MethodPost, "/admin/v1/deliveries/replay", map[string]any{"endpoint_id": "00000000-0000-0000-0000-000000000000",
			"since": now.Add(-time.Hour), "until": now}, http.StatusNotFound},
		{http.MethodGet, "/admin/v1/deliveries/replay/count?endpoint_id=" + w.endpoint + "&until=2026-01-01T00:00:00Z", nil, http.StatusUnprocessableEntity},
		{http.MethodGet, "/admin/v1/deliveries/replay/count?endpoint_id=" + w.endpoint + "&since=2026-01-02T00:00:00Z&until=2026-01-01T00:00:00Z", nil,
			http.StatusUnprocessableEntity},
		{http.MethodGet, "/admin/v1/deliveries/replay/count?endpoint_id=" + w.endpoint + "&since=2026-01-01T00:00:00Z&until=2026-01-05T00:00:00Z", nil,
			http.StatusUnprocessableEntity},
		{http.MethodGet, "/admin/v1/deliveries/replay/count?endpoint_id=ABC&since=2026-01-01T00:00:00Z&until=2026-01-02T00:00:00Z", nil,
			http.StatusUnprocessableEntity},
		{http.MethodGet, "/admin/v1/deliveries/replay/count?endpoint_id=00000000-0000-0000-0000-000000000000&since=2026-01-01T00:00:00Z&until=2026-01-02T00:00:00Z",
			nil, http.StatusNotFound},
	} {
		status, got := b.do(t, root, c.method, c.path, c.body)
		if status != c.want {
			t.Errorf("%s %s %v: %d %s, want %d", c.method, c.path, c.body, status, got, c.want)
		}
		if status == http.StatusUnprocessableEntity && strings.Contains(string(got), "internal") {
			t.Errorf("%s %s: %s", c.method, c.path, got)
		}
	}
}

func atoi(t *testing.T, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatal(fmt.Errorf("%q: %w", s, err))
	}
	return n
}
