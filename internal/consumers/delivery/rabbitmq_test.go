package delivery_test

import (
	"context"
	"io"
	"log/slog"
	"net/netip"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/sluicehq/sluice/internal/consumers/delivery"
	"github.com/sluicehq/sluice/internal/egress"
	"github.com/sluicehq/sluice/internal/store/endpoints"
	"github.com/sluicehq/sluice/internal/testenv"
)

// A RabbitMQ target takes a message only when the server confirms it:
// persistent, its message id the webhook-id, signed like a request, the
// resource key in a header. A routing key no queue is bound to returns the
// message (a failed attempt, never a silent drop), and an address the
// policy refuses is never dialled.
func TestRabbitMQTargetIsConfirmedOrFails(t *testing.T) {
	t.Parallel()
	rmq := testenv.StartRabbitMQ(t)
	e := newEnv(t)
	ctx := context.Background()
	conn, err := amqp.Dial(rmq.AMQPURL())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ch.QueueDeclare("orders", true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	store := endpoints.Store{Pool: e.pool, Ring: e.ring, Limits: endpoints.Limits{AllowHTTP: true}}
	create := func(routingKey string) string {
		t.Helper()
		ep, _, err := store.CreateEndpoint(ctx, endpoints.New{TenantID: e.tenant, URL: rmq.URL, Filters: []string{"*"},
			Kind: endpoints.KindRabbitMQ, Settings: endpoints.TargetSettings{RoutingKey: routingKey},
			Credentials: &endpoints.TargetCredentials{Username: rmq.User, Password: rmq.Password}})
		if err != nil {
			t.Fatal(err)
		}
		return ep.ID
	}
	routed, unrouted := create("orders"), create("nowhere")
	deliverer := func(allow ...netip.Prefix) *delivery.Deliverer {
		policy := egress.Policy{Allow: allow}
		return delivery.New(delivery.Config{Client: egress.NewClient(egress.Config{Policy: policy}), Timeout: 5 * time.Second,
			Dial: egress.NewDialer(egress.Config{Policy: policy, ConnectTimeout: time.Second}).DialContext},
			slog.New(slog.NewTextHandler(io.Discard, nil)), e.pool, store)
	}
	d := deliverer(netip.MustParsePrefix("127.0.0.1/32"))

	a, err := d.TestEndpoint(ctx, routed, endpoints.TestEvent{})
	if err != nil || !a.OK() {
		t.Fatalf("test of a routed rabbitmq endpoint: %+v, %v; want confirmed", a, err)
	}
	msg, ok, err := ch.Get("orders", true)
	if err != nil || !ok {
		t.Fatalf("the queue holds nothing (%v)", err)
	}
	if msg.DeliveryMode != amqp.Persistent || !strings.HasPrefix(msg.MessageId, "msg_") || msg.Headers["webhook-id"] != msg.MessageId ||
		!strings.HasPrefix(msg.Headers["webhook-signature"].(string), "v1,") || msg.Headers[delivery.PartitionKeyHeader] == nil {
		t.Errorf("message: mode %d, id %q, headers %v; want persistent, the webhook-id as its id, signed, the resource key", msg.DeliveryMode, msg.MessageId, msg.Headers)
	}

	if a, err := d.TestEndpoint(ctx, unrouted, endpoints.TestEvent{}); err != nil || a.OK() || a.ErrorClass != "status" || !strings.Contains(a.Error, "returned") {
		t.Errorf("test of an unrouted rabbitmq endpoint: %+v, %v; want a failed attempt saying the server returned it", a, err)
	}
	if a, err := deliverer().TestEndpoint(ctx, routed, endpoints.TestEvent{}); err != nil || a.ErrorClass != egress.ClassRefusedAddress {
		t.Errorf("test under a policy refusing loopback: %+v, %v; want refused_address", a, err)
	}
	if _, ok, _ := ch.Get("orders", true); ok {
		t.Error("the queue holds a message no confirmed attempt sent")
	}
}
