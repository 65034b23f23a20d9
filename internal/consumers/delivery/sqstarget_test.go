package delivery_test

import (
	"context"
	"io"
	"log/slog"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/sluicehq/sluice/internal/consumers/delivery"
	"github.com/sluicehq/sluice/internal/egress"
	"github.com/sluicehq/sluice/internal/store/endpoints"
	"github.com/sluicehq/sluice/internal/testenv"
)

// An SQS target's attempt succeeds when the queue holds the message: on a
// FIFO queue in its resource's group, deduplicated on its webhook-id,
// signed like a request, the resource key an attribute. A queue that does
// not exist is the target's refusal; an address the policy refuses is
// never dialled; while the server is down an attempt fails within the
// timeout, and the same sender succeeds again once it is back.
func TestSQSTargetHoldsTheMessageInItsResourcesGroupOrFails(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	mq := testenv.StartElasticMQ(t)
	fifo, plain := mq.CreateQueue(t, "orders.fifo"), mq.CreateQueue(t, "orders")
	e := newEnv(t)
	store := endpoints.Store{Pool: e.pool, Ring: e.ring, Limits: endpoints.Limits{AllowHTTP: true}}
	target := func(queue string) endpoints.Target {
		t.Helper()
		ep, _, err := store.CreateEndpoint(ctx, endpoints.New{TenantID: e.tenant, URL: queue, Filters: []string{"*"},
			Kind: endpoints.KindSQS, Settings: endpoints.TargetSettings{Region: "elasticmq"},
			Credentials: &endpoints.TargetCredentials{Username: "AKIDSLUICE", Password: "secret"}})
		if err != nil {
			t.Fatal(err)
		}
		tg, _, err := store.Target(ctx, ep.ID)
		if err != nil {
			t.Fatal(err)
		}
		return tg
	}
	deliverer := func(allow ...netip.Prefix) *delivery.Deliverer {
		policy := egress.Policy{Allow: allow}
		return delivery.New(delivery.Config{Client: egress.NewClient(egress.Config{Policy: policy}), Timeout: 3 * time.Second,
			Dial: egress.NewDialer(egress.Config{Policy: policy, ConnectTimeout: time.Second}).DialContext},
			slog.New(slog.NewTextHandler(io.Discard, nil)), e.pool, store)
	}
	d := deliverer(netip.MustParsePrefix("127.0.0.1/32"))

	s := d.NewSender(target(fifo))
	defer s.Close()
	for _, m := range [][2]string{{"customer/1", "a"}, {"customer/2", "b"}, {"customer/1", "c"}, {"customer/1", "a"}} {
		if a := s.Send(ctx, m[0], m[1]); !a.OK() {
			t.Fatalf("send of %s about %s: %+v; want it held", m[1], m[0], a)
		}
	}
	groups := map[string][]string{}
	for _, msg := range drain(t, mq, fifo, 3) {
		id := attribute(msg, "webhook-id")
		if !strings.HasPrefix(attribute(msg, "webhook-signature"), "v1,") || msg.Attributes["MessageDeduplicationId"] != id ||
			attribute(msg, delivery.PartitionKeyHeader) != msg.Attributes["MessageGroupId"] {
			t.Errorf("message %s: signature %q, deduplication id %q, group %q, resource %q; want signed, deduplicated on its webhook-id, grouped by its resource",
				id, attribute(msg, "webhook-signature"), msg.Attributes["MessageDeduplicationId"], msg.Attributes["MessageGroupId"], attribute(msg, delivery.PartitionKeyHeader))
		}
		groups[msg.Attributes["MessageGroupId"]] = append(groups[msg.Attributes["MessageGroupId"]], id)
	}
	if strings.Join(groups["customer/1"], ",") != "msg_a,msg_c" || strings.Join(groups["customer/2"], ",") != "msg_b" {
		t.Errorf("received by group %v; want customer/1: msg_a, msg_c (its second msg_a dropped as a duplicate), customer/2: msg_b", groups)
	}

	standard := d.NewSender(target(plain))
	defer standard.Close()
	if a := standard.Send(ctx, "customer/1", "d"); !a.OK() {
		t.Errorf("send to a standard queue: %+v; want it held", a)
	}
	drain(t, mq, plain, 1)
	missing := d.NewSender(target(mq.QueueURL("nowhere")))
	defer missing.Close()
	if a := missing.Send(ctx, "customer/1", "e"); a.ErrorClass != "status" {
		t.Errorf("send to a queue that does not exist: %+v; want the server's refusal (status)", a)
	}
	refused := deliverer().NewSender(target(fifo))
	defer refused.Close()
	if a := refused.Send(ctx, "customer/1", "f"); a.ErrorClass != egress.ClassRefusedAddress {
		t.Errorf("send under a policy refusing loopback: %+v; want refused_address", a)
	}

	mq.Stop(t)
	start := time.Now()
	if a := s.Send(ctx, "customer/1", "g"); a.OK() || time.Since(start) > 10*time.Second {
		t.Errorf("send while the server is down: %+v after %s; want a failure within the timeout", a, time.Since(start))
	}
	mq.Start(t)
	// A group of its own: ElasticMQ's store may bring back a message
	// deleted before its stop, in flight, holding its group.
	if a := s.Send(ctx, "customer/3", "h"); !a.OK() {
		t.Errorf("send once the server is back: %+v; want it held", a)
	}
	var ids []string
	for _, m := range mq.Drain(t, fifo) {
		ids = append(ids, attribute(m, "webhook-id"))
	}
	if !slices.Contains(ids, "msg_h") {
		t.Errorf("after the restart the queue holds %v; want msg_h among them", ids)
	}
}

// drain is what queue holds, deleted, failing t unless it is n messages.
func drain(t *testing.T, mq *testenv.ElasticMQ, queue string, n int) []types.Message {
	t.Helper()
	got := mq.Drain(t, queue)
	if len(got) != n {
		t.Fatalf("the queue held %d messages; want %d", len(got), n)
	}
	return got
}

// attribute is msg's string attribute name.
func attribute(msg types.Message, name string) string {
	if v, ok := msg.MessageAttributes[name]; ok && v.StringValue != nil {
		return *v.StringValue
	}
	return ""
}
