package orders_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"example.com/orders"

	"github.com/sluicehq/sluice/effect"
	"github.com/sluicehq/sluice/effect/effecttest"
)

func TestMain(m *testing.M) { os.Exit(effecttest.Main(m)) }

// The kit's scenarios for the orders group: stock reserved once per line
// and released once, the order's projection by version, one confirmation
// per order, whatever the deliveries, the order of arrival, a crash, a
// rewind, a lock held elsewhere or batches contending for stock rows.
func TestOrdersKeepTheirPromises(t *testing.T) {
	t.Parallel()
	effecttest.Run(t, Suite(orders.Group()))
}

// Suite is the kit's description of an orders group (the real one, or a
// deliberately wrong one).
func Suite(g effect.Group) effecttest.Suite {
	return effecttest.Suite{
		Group:      g,
		Kind:       "hmac",
		Migrations: orders.Migrations(),
		AnyOrder:   true,
		Setup: func(tb testing.TB, f effecttest.Fixture) {
			_, err := f.DB.Exec(context.Background(),
				`INSERT INTO stock (tenant_id, sku, available) VALUES ($1, 'sku-a', 1000), ($1, 'sku-b', 1000)`, f.TenantID)
			if err != nil {
				tb.Fatal(err)
			}
		},
		Histories: []effecttest.History{
			history("placed", "placed v1; reserve 2, release 0; confirmed 1", "placed"),
			history("placed, then updated", "updated v2; reserve 2, release 0; confirmed 1", "placed", "updated"),
			history("placed, updated, cancelled", "cancelled v3; reserve 2, release 2; confirmed 1", "placed", "updated", "cancelled"),
		},
		State: func(tb testing.TB, f effecttest.Fixture, order string) string {
			var status string
			var version, reserve, release, confirmed int
			err := f.DB.QueryRow(context.Background(), `SELECT
				  coalesce((SELECT status FROM orders WHERE tenant_id = $1 AND order_id = $2), 'none'),
				  coalesce((SELECT version FROM orders WHERE tenant_id = $1 AND order_id = $2), 0),
				  (SELECT count(*) FROM order_line_operations WHERE tenant_id = $1 AND order_id = $2 AND operation = 'reserve'),
				  (SELECT count(*) FROM order_line_operations WHERE tenant_id = $1 AND order_id = $2 AND operation = 'release'),
				  (SELECT count(*) FROM outbox WHERE headers->>'ce_tenantid' = $1::text AND headers->>'ce_type' = 'orders.confirmed'
				     AND headers->>'ce_subject' = $2)`, f.TenantID, order).Scan(&status, &version, &reserve, &release, &confirmed)
			if err != nil {
				return err.Error()
			}
			return fmt.Sprintf("%s v%d; reserve %d, release %d; confirmed %d", status, version, reserve, release, confirmed)
		},
		Shared: &effecttest.Shared{Lock: `SELECT 1 FROM stock WHERE tenant_id = $1 FOR UPDATE`},
	}
}

// history is an order placed, then changed as steps say, version by
// version. Orders name their two lines' SKUs in either order, so batches
// of different orders meet on the stock rows from both ends.
func history(name, final string, steps ...string) effecttest.History {
	return effecttest.History{Name: name, Final: final, Events: func(_ effecttest.Fixture, order string) []effecttest.Event {
		lines := `[{"id":"l1","sku":"sku-a","quantity":2},{"id":"l2","sku":"sku-b","quantity":1}]`
		if order[len(order)-1]%2 == 1 {
			lines = `[{"id":"l2","sku":"sku-b","quantity":1},{"id":"l1","sku":"sku-a","quantity":2}]`
		}
		evs := make([]effecttest.Event, len(steps))
		for i, step := range steps {
			id := fmt.Sprintf("evt_%s_%d", order, i+1)
			evs[i] = effecttest.Event{ID: id, Type: "hmac.order." + step, ObjectType: "order",
				Body: fmt.Appendf(nil, `{"id":%q,"type":"order.%s","order":{"id":%q,"version":%d,"total":%d,"lines":%s}}`,
					id, step, order, i+1, 1200+100*i, lines)}
		}
		return evs
	}}
}

// The kit fails deliberately wrong versions of the group, each in the
// scenario made to catch it. Each runs in a process of its own (this test
// binary again, running TestAWrongGroupUnderTheKit), since a test cannot
// fail on purpose inside the one that checks it failed.
func TestTheKitFailsAGroupKeyedByEventID(t *testing.T) {
	t.Parallel()
	requireKitFails(t, "keyed-by-event-id", "--- FAIL: TestAWrongGroupUnderTheKit/DistinctEventsAboutOneOperation", "reserve 4")
}

func TestTheKitFailsAProjectionWithoutItsVersionGuard(t *testing.T) {
	t.Parallel()
	requireKitFails(t, "without-version-guard", "--- FAIL: TestAWrongGroupUnderTheKit/AnyOrderEndsInTheNewestState", `want "cancelled v3`)
}

func TestTheKitFailsSharedRowsUpdatedOutOfLockOrder(t *testing.T) {
	t.Parallel()
	requireKitFails(t, "out-of-lock-order", "--- FAIL: TestAWrongGroupUnderTheKit/BatchesContendingForSharedRowsNeverDeadlock", "waited out the lock timeout")
}

// wrongGroups are the deliberately wrong groups, by name.
var wrongGroups = map[string]func() effect.Group{
	"keyed-by-event-id":     orders.WrongKeyedByEventID,
	"without-version-guard": orders.WrongWithoutVersionGuard,
	"out-of-lock-order":     orders.WrongOutOfLockOrder,
}

// requireKitFails runs the kit over the wrong group named, in a process of
// its own, and fails unless the kit failed it with want in its output.
func requireKitFails(t *testing.T, wrong string, want ...string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestAWrongGroupUnderTheKit$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), "ORDERS_WRONG_GROUP="+wrong)
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("the kit passed the group %s:\n%s", wrong, out)
	}
	for _, w := range want {
		if !strings.Contains(string(out), w) {
			t.Errorf("the kit's output for the group %s lacks %q:\n%s", wrong, w, out)
		}
	}
}

// TestAWrongGroupUnderTheKit is the process requireKitFails starts; run
// alone, without ORDERS_WRONG_GROUP, it has nothing to check (the helper
// process pattern of os/exec's tests).
func TestAWrongGroupUnderTheKit(t *testing.T) {
	wrong := os.Getenv("ORDERS_WRONG_GROUP")
	if wrong == "" {
		return
	}
	effecttest.Run(t, Suite(wrongGroups[wrong]()))
}
