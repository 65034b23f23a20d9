package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/store/endpoints"
)

// deliveryFixture is a tenant's endpoint (disabled, so a deliverer in the
// suite's process never sends to it) with a dead delivery after two failed
// attempts and a delivered one, as the fan-out and the deliverer leave them.
type deliveryFixture struct {
	tenant, endpoint string
	dead, delivered  int64
}

func newDeliveryFixture(t *testing.T) deliveryFixture {
	t.Helper()
	ctx := context.Background()
	f := deliveryFixture{tenant: newTenant(t).tenantID}
	if err := suite.pool.QueryRow(ctx, `INSERT INTO endpoints (tenant_id, url, filters, disabled_at, disabled_reason)
VALUES ($1, 'https://example.com/hook', '{*}', now(), 'operator') RETURNING id::text`, f.tenant).Scan(&f.endpoint); err != nil {
		t.Fatal(err)
	}
	insert := func(state string, attempts int, status int) int64 {
		var id int64
		if err := suite.pool.QueryRow(ctx, `
INSERT INTO deliveries (endpoint_id, tenant_id, webhook_id, partition_key, state, attempts, created_at, delivered_at, last_status,
                        latency_ms, event_id, event_type, source, topic, partition, "offset")
VALUES ($1, $2, gen_random_uuid()::text, 'k', $3, $4, now() - interval '1 hour', CASE WHEN $3::text = 'delivered' THEN now() END,
        $5, 25, 'evt_cli', 'api.order.placed', 's', 'sluice.order', 0, 1)
RETURNING id`, f.endpoint, f.tenant, state, attempts, status).Scan(&id); err != nil {
			t.Fatal(err)
		}
		return id
	}
	f.dead, f.delivered = insert("dead", 2, 503), insert("delivered", 1, 200)
	for n := 1; n <= 2; n++ {
		if _, err := suite.pool.Exec(ctx, `INSERT INTO delivery_attempts (delivery_id, attempt, endpoint_id, status, latency_ms, error_class, error)
VALUES ($1, $2, $3, 503, 20, 'status', 'status 503')`, f.dead, n, f.endpoint); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

func TestDeliveryCommandsListShowRetryAndReplay(t *testing.T) {
	t.Parallel()
	f := newDeliveryFixture(t)
	var page struct {
		Items []endpoints.Delivery `json:"items"`
		Next  string               `json:"next_cursor"`
	}
	runJSON(t, &page, "delivery", "list", "--tenant", f.tenant)
	if len(page.Items) != 2 || page.Items[0].ID != f.delivered || page.Items[1].ID != f.dead {
		t.Fatalf("list: %+v", page)
	}
	runJSON(t, &page, "delivery", "list", "--endpoint", f.endpoint, "--state", "dead")
	if len(page.Items) != 1 || page.Items[0].ID != f.dead {
		t.Errorf("list of the dead: %+v", page)
	}
	if text := runText(t, "delivery", "list", "--tenant", f.tenant, "--limit", "1"); !strings.Contains(text, "more: --cursor ") {
		t.Errorf("a full page says where the next starts:\n%s", text)
	}

	var d endpoints.Delivery
	runJSON(t, &d, "delivery", "get", fmt.Sprint(f.dead))
	if d.State != endpoints.Dead || len(d.History) != 2 || d.History[0].ErrorClass != "status" {
		t.Errorf("get: %+v", d)
	}
	if text := runText(t, "delivery", "get", fmt.Sprint(f.delivered)); !strings.Contains(text, "requests:") || !strings.Contains(text, "200") {
		t.Errorf("get shows the success:\n%s", text)
	}

	runJSON(t, &d, "delivery", "retry", fmt.Sprint(f.dead))
	if d.State != endpoints.Pending || d.NextAt == nil {
		t.Errorf("retry: %+v", d)
	}
	now := time.Now().UTC()
	var r endpoints.Replayed
	runJSON(t, &r, "delivery", "replay", "--endpoint", f.endpoint, "--since", now.Add(-2*time.Hour).Format(time.RFC3339),
		"--until", now.Format(time.RFC3339))
	if r.Replayed != 1 || r.TenantID != f.tenant { // the dead one is pending already
		t.Errorf("replay: %+v", r)
	}
	if n := count(t, `SELECT count(*) FROM admin_audit WHERE tenant_id = $1 AND token_id IS NULL AND action IN ('delivery.retry', 'endpoint.replay')`,
		f.tenant); n != 2 {
		t.Errorf("%d CLI actions audited, want 2", n)
	}
}

func TestDeliveryCommandsRefuseInWords(t *testing.T) {
	t.Parallel()
	f := newDeliveryFixture(t)
	now := time.Now().UTC()
	for _, c := range []struct {
		args []string
		code int
		says string
	}{
		{[]string{"delivery", "get", "999999999"}, 1, "no delivery 999999999"},
		{[]string{"delivery", "retry", "999999999"}, 1, "no delivery 999999999"},
		{[]string{"delivery", "list", "--state", "lost"}, 2, "state"},
		{[]string{"delivery", "list", "--endpoint", "NOT-A-UUID"}, 2, "--endpoint: must be a canonical uuid"},
		{[]string{"delivery", "replay", "--endpoint", f.endpoint, "--since", now.Format(time.RFC3339), "--until", now.Add(-time.Hour).Format(time.RFC3339)},
			1, "must be after since"},
		{[]string{"delivery", "replay", "--endpoint", f.endpoint, "--since", now.Add(-8 * 24 * time.Hour).Format(time.RFC3339), "--until", now.Format(time.RFC3339)},
			1, "payload horizon"},
		{[]string{"delivery", "replay", "--endpoint", "00000000-0000-0000-0000-000000000000", "--since", now.Add(-time.Hour).Format(time.RFC3339),
			"--until", now.Format(time.RFC3339)}, 1, "no endpoint"},
	} {
		stdout, stderr, code := cli(t, append(c.args, "-o", "json")...)
		if code != c.code || !strings.Contains(stderr, c.says) {
			t.Errorf("sluice %v: exit %d, %q; want %d saying %q", c.args, code, stderr, c.code, c.says)
		}
		var refusal struct {
			Error struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(stdout), &refusal); err != nil || refusal.Error.Message == "" {
			t.Errorf("sluice %v -o json: %q, want {\"error\":...}", c.args, stdout)
		}
	}
}

// delivery retry-dead counts unless told --execute, and then retries what
// it counted: a selection that holds the dead delivery, and one whose type
// or class does not.
func TestDeliveryRetryDeadCountsThenRetriesWhatItCounted(t *testing.T) {
	t.Parallel()
	f := newDeliveryFixture(t)
	now := time.Now().UTC()
	window := []string{"--endpoint", f.endpoint, "--since", now.Add(-2 * time.Hour).Format(time.RFC3339), "--until", now.Format(time.RFC3339)}
	var n endpoints.DeadCount
	for _, miss := range [][]string{{"--type", "stripe.*"}, {"--error-class", "timeout"}} {
		runJSON(t, &n, append(append([]string{"delivery", "retry-dead"}, window...), miss...)...)
		if n.Retryable != 0 {
			t.Errorf("%v: %+v, want none", miss, n)
		}
	}
	sel := append(append([]string{"delivery", "retry-dead"}, window...), "--type", "api.order.*", "--error-class", "status")
	runJSON(t, &n, sel...)
	if n.Retryable != 1 || n.TenantID != f.tenant {
		t.Fatalf("dry run: %+v, want the dead one", n)
	}
	if state := count(t, `SELECT count(*) FROM deliveries WHERE id = $1 AND state = 'dead'`, f.dead); state != 1 {
		t.Fatal("the dry run changed the delivery")
	}
	if text := runText(t, sel...); !strings.HasPrefix(text, "1\n") || !strings.Contains(text, "--execute") {
		t.Errorf("the dry run's text:\n%s", text)
	}
	var r endpoints.DeadRetried
	runJSON(t, &r, append(sel, "--execute")...)
	if r.Retried != n.Retryable {
		t.Errorf("retried %d, the dry run counted %d", r.Retried, n.Retryable)
	}
	if state := count(t, `SELECT count(*) FROM deliveries WHERE id = $1 AND state = 'pending' AND next_at <= now()`, f.dead); state != 1 {
		t.Error("the dead delivery is not pending, due now")
	}
	if n := count(t, `SELECT count(*) FROM admin_audit WHERE tenant_id = $1 AND token_id IS NULL AND action = 'endpoint.retry_dead'`, f.tenant); n != 1 {
		t.Errorf("%d retries audited, want 1", n)
	}
}
