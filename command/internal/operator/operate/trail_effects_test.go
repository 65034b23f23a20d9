package operate_test

import (
	"testing"
	"time"

	"github.com/sluicehq/sluice/command/internal/effects/builtintest"
	"github.com/sluicehq/sluice/command/internal/operator/operate"
	"github.com/sluicehq/sluice/internal/store/inbox"
)

// shopTrail is the trail query of a team's group (effect.Group.Trail) as a
// team's .sql file holds it: its rows found by tenant ($4) and object
// ($3), the source's parameters left out, NULL for what it does not keep,
// a comment before its end and a semicolon closing it.
const shopTrail = `-- The order's row.
SELECT 'shop', 'projection', '', tenant_id::text || '/' || order_id, event_id, inbox_id, NULL, NULL, status,
       NULL, NULL, NULL, NULL
FROM shop.orders WHERE tenant_id = $4 AND order_id = $3 -- by its key
;
`

// An event's trail shows the effects of every effect group the deployment
// runs, a team's own among them, each from its group's own query: beside
// the built-in groups, and alone (a deployment that runs none of them).
// Another tenant's row about an object of the same id is not shown.
func TestTrailShowsTheEffectsOfTheDeploymentsOwnGroups(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := t.Context()
	ids := b.seed(t, row{b.tenantA, b.sourceA, "evt_order", "hmac.order.placed", "o-1", inbox.StatusPublished, time.Now().Add(-time.Minute)})
	if _, err := b.pool.Exec(ctx, `CREATE SCHEMA shop;
		CREATE TABLE shop.orders (tenant_id uuid, order_id text, status text, event_id text, inbox_id bigint, PRIMARY KEY (tenant_id, order_id))`); err != nil {
		t.Fatal(err)
	}
	if _, err := b.pool.Exec(ctx, `INSERT INTO shop.orders VALUES ($1, 'o-1', 'placed', 'evt_order', $3), ($2, 'o-1', 'cancelled', 'evt_b', 1)`,
		b.tenantA, b.tenantB, ids[0]); err != nil {
		t.Fatal(err)
	}
	for name, trails := range map[string][]string{
		"beside the built-in groups": append(builtintest.Trails(), shopTrail),
		"alone":                      {shopTrail},
	} {
		op := operate.New(b.pool, nil, operate.Config{Topics: b.topics, Trails: trails})
		trail, err := op.Trail(ctx, nil, ids[0])
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(trail.Effects) != 1 {
			t.Fatalf("%s: effects %+v, want the order's row", name, trail.Effects)
		}
		e := trail.Effects[0]
		if e.Group != b.topics.Resource("shop") || e.Kind != "projection" || e.State != "placed" || e.BusinessKey != b.tenantA+"/o-1" ||
			!e.ThisEvent || e.InboxID == nil || *e.InboxID != ids[0] || e.ProcessedAt != nil || e.Applied.Topic != nil || e.Credits != 0 {
			t.Errorf("%s: effect %+v, want the order's projection, caused by this event, with no record or time kept", name, e)
		}
	}
	none := operate.New(b.pool, nil, operate.Config{Topics: b.topics})
	if trail, err := none.Trail(ctx, nil, ids[0]); err != nil || len(trail.Effects) != 0 {
		t.Errorf("a deployment whose groups show no effects: %+v, %v", trail.Effects, err)
	}
}
