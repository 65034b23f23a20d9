package pyorders_test

import (
	"context"
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"example.com/orders"

	"github.com/sluicehq/sluice/effect/effecttest"
)

func TestMain(m *testing.M) { os.Exit(effecttest.Main(m)) }

// The Python consumer, a process of its own, passes the kit's scenarios
// with exactly-once effects: stock reserved once per line and released
// once, the order's projection by version, one confirmation per order,
// whatever the deliveries, the order of arrival, a crash between its
// effects' commit and its offsets', a rewind, a poison record, a stock row
// locked elsewhere or batches of several processes contending for stock
// rows.
func TestPythonOrdersKeepTheirPromises(t *testing.T) {
	t.Parallel()
	effecttest.Run(t, suite(effecttest.Suite{Process: pythonOrders(t)}))
}

// The Go group of examples/orders under the same suite: what the Python
// consumer leaves, its confirmations' outbox rows header for header, is
// what the Go group leaves.
func TestTheGoGroupLeavesWhatThePythonConsumerLeaves(t *testing.T) {
	t.Parallel()
	effecttest.Run(t, suite(effecttest.Suite{Group: orders.Group()}))
}

// pythonOrders is the consumer as the kit runs it: ORDERS_PYTHON names the
// Python of its virtual environment (make test installs it with
// install.sh).
func pythonOrders(t *testing.T) *effecttest.Process {
	python := os.Getenv("ORDERS_PYTHON")
	if python == "" {
		t.Fatal("ORDERS_PYTHON names no Python: make test installs the consumer's virtual environment " +
			"(bash examples/python-orders/install.sh DIR) and sets it to DIR/bin/python")
	}
	return &effecttest.Process{
		Name:    "python-orders",
		Command: []string{python, "-m", "pyorders"},
		Env: func(r effecttest.ProcessRun) []string {
			crash := ""
			if r.CrashAfterCommit {
				crash = "1"
			}
			return []string{"SLUICE_DATABASE_URL=" + r.DatabaseURL, "SLUICE_KAFKA_BROKERS=" + r.Brokers,
				"SLUICE_TOPIC_PREFIX=" + r.Prefix, "ORDERS_TOPIC=" + r.Topic, "ORDERS_GROUP=" + r.Group,
				fmt.Sprintf("ORDERS_MAX_BATCH=%d", r.MaxBatch), "ORDERS_CRASH_AFTER_COMMIT=" + crash,
				fmt.Sprintf("ORDERS_FAIL_FIRST=%d", r.FailFirst), "ORDERS_ATTEMPTS_FILE=" + r.Attempts, "PYTHONUNBUFFERED=1"}
		},
		DeadLetters: `SELECT partition, "offset", reason FROM python_orders_dead_letters WHERE consumer_group = $1`,
	}
}

// suite is the kit's description of the orders effect, for s's group (Go)
// or process (Python).
func suite(s effecttest.Suite) effecttest.Suite {
	s.Kind = "hmac"
	s.Migrations = orders.Migrations()
	s.AnyOrder = true
	s.Setup = func(tb testing.TB, f effecttest.Fixture) {
		_, err := f.DB.Exec(context.Background(),
			`INSERT INTO stock (tenant_id, sku, available) VALUES ($1, 'sku-a', 1000), ($1, 'sku-b', 1000)`, f.TenantID)
		if err != nil {
			tb.Fatal(err)
		}
	}
	s.Histories = []effecttest.History{
		history("placed", "placed v1; reserve 2, release 0; confirmed 1", "placed"),
		history("placed, then updated", "updated v2; reserve 2, release 0; confirmed 1", "placed", "updated"),
		history("placed, updated, cancelled", "cancelled v3; reserve 2, release 2; confirmed 1", "placed", "updated", "cancelled"),
	}
	s.State = state
	s.Shared = &effecttest.Shared{Lock: `SELECT 1 FROM stock WHERE tenant_id = $1 FOR UPDATE`}
	return s
}

// history is an order placed, then changed as steps say, version by
// version, its lines naming their SKUs in either order (so batches of
// different orders meet on the stock rows from both ends); final is its
// state, the confirmation's outbox row after it.
func history(name, final string, steps ...string) effecttest.History {
	return effecttest.History{Name: name, Final: final + "; " + confirmationRow, Events: func(_ effecttest.Fixture, order string) []effecttest.Event {
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

// confirmationRow is a placed order's confirmation as the Go runtime
// writes it to the outbox (effect.Intent): topic, key, headers, body.
const confirmationRow = `{prefix}.notifications {tenant}/order/{order} ` +
	`ce_id={source}/{account}/{order}/confirm ce_partitionkey={tenant}/order/{order} ce_source=/tenants/{tenant}/sources/{source} ` +
	`ce_sourceaccount={account} ce_specversion=1.0 ce_subject={order} ce_tenantid={tenant} ce_type=orders.confirmed ` +
	`content-type=application/json traceparent={traceparent} {"order_id":"{order}","total":1200}`

// state is what the effect left of order: its projection, its lines'
// operations, its confirmations and the first one's outbox row.
func state(tb testing.TB, f effecttest.Fixture, order string) string {
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
	return fmt.Sprintf("%s v%d; reserve %d, release %d; confirmed %d; %s", status, version, reserve, release, confirmed, confirmation(f, order))
}

// traceParent is a W3C traceparent.
var traceParent = regexp.MustCompile(`^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$`)

// confirmation is order's confirmation as the outbox holds it, the ids of
// the fixture and the order named, so every order's reads the same.
func confirmation(f effecttest.Fixture, order string) string {
	var topic string
	var key, payload []byte
	var headers map[string]string
	err := f.DB.QueryRow(context.Background(), `SELECT topic, key, headers, payload FROM outbox
		WHERE headers->>'ce_tenantid' = $1::text AND headers->>'ce_type' = 'orders.confirmed' AND headers->>'ce_subject' = $2
		ORDER BY id LIMIT 1`, f.TenantID, order).Scan(&topic, &key, &headers, &payload)
	if err != nil {
		return "no confirmation: " + err.Error()
	}
	if prefix, ok := strings.CutSuffix(topic, ".notifications"); ok && prefix != "" {
		topic = "{prefix}.notifications"
	}
	if traceParent.MatchString(headers["traceparent"]) {
		headers["traceparent"] = "{traceparent}"
	}
	names := strings.NewReplacer(f.TenantID, "{tenant}", f.SourceID, "{source}", f.Account, "{account}", order, "{order}")
	row := []string{topic, string(key)}
	for _, k := range slices.Sorted(maps.Keys(headers)) {
		row = append(row, k+"="+headers[k])
	}
	return names.Replace(strings.Join(append(row, string(payload)), " "))
}
