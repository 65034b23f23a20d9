package endpoints_test

import (
	"context"
	"errors"
	"testing"

	"github.com/sluicehq/sluice/internal/refusal"
	"github.com/sluicehq/sluice/internal/store/endpoints"
)

// A deployment's own endpoint is the operator's: the endpoints API finds
// it nowhere, no tenant lists its deliveries or finds one of them, and it
// is not among the tenants' targets or subscriptions; an unscoped list of
// deliveries shows them.
func TestTheDeploymentsEndpointIsNoTenantsToSee(t *testing.T) {
	s := newStore(t, endpoints.Limits{})
	ctx := context.Background()
	tenant := newTenant(t)
	own, _ := create(t, s, endpoints.New{TenantID: tenant})
	prefix := "deployment-" + tenant
	if err := s.EnsureDeploymentEndpoint(ctx, prefix, "https://mail.example/intents"); err != nil {
		t.Fatal(err)
	}
	dep := endpoints.DeploymentEndpointID(prefix)
	var intent int64
	if err := pool.QueryRow(ctx, `INSERT INTO deliveries (endpoint_id, tenant_id, webhook_id, partition_key, payload, event_id, event_type, source, topic, partition, "offset")
VALUES ($1, $2, 'intent-1', 'k', '{}', 'intent-1', 'sluice.email.x', '/s', 'n', 0, 0) RETURNING id`, dep, tenant).Scan(&intent); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetEndpoint(ctx, dep); !errors.Is(err, refusal.ErrNotFound) {
		t.Errorf("get: %v, want not found", err)
	}
	if _, err := s.TenantOf(ctx, dep); !errors.Is(err, refusal.ErrNotFound) {
		t.Errorf("tenant of: %v, want not found", err)
	}
	if err := s.DeleteEndpoint(ctx, dep); !errors.Is(err, refusal.ErrNotFound) {
		t.Errorf("delete: %v, want not found", err)
	}
	if _, err := s.DisableEndpoint(ctx, dep); !errors.Is(err, refusal.ErrNotFound) {
		t.Errorf("disable: %v, want not found", err)
	}
	for after := "start"; after != ""; {
		page := endpoints.Page{Limit: 100}
		if after != "start" {
			page.After = after
		}
		list, next, err := s.ListEndpoints(ctx, endpoints.Filter{}, page)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range list {
			if e.ID == dep {
				t.Error("an unscoped list of endpoints shows the deployment's")
			}
		}
		after = next
	}
	if owner, err := s.TenantOfDelivery(ctx, intent); err != nil || owner != "" {
		t.Errorf("the intent's delivery belongs to %q (%v), want no tenant", owner, err)
	}
	scoped, _, err := s.ListDeliveries(ctx, endpoints.DeliveryFilter{TenantID: tenant})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range scoped {
		if d.EndpointID == dep {
			t.Error("the tenant's list of deliveries shows the deployment endpoint's")
		}
	}
	all, _, err := s.ListDeliveries(ctx, endpoints.DeliveryFilter{EndpointID: dep})
	if err != nil || len(all) != 1 {
		t.Errorf("an operator's list of the deployment's deliveries: %d (%v), want 1", len(all), err)
	}
	subs, err := s.Subscriptions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, sub := range subs {
		if sub.EndpointID == dep {
			t.Error("the fan-out subscribes the deployment's endpoint to tenants' events")
		}
	}
	if _, ok := target(t, s, own.ID); !ok {
		t.Error("the tenant's own endpoint is no target")
	}
	if _, ok := target(t, s, dep); ok {
		t.Error("the deployment's endpoint is a target of the tenants' deliverer")
	}
}
