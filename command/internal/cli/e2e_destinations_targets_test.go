package cli

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicehq/sluice/command/internal/effects/builtintest"
	"github.com/sluicehq/sluice/internal/consumers/consumertest"
	"github.com/sluicehq/sluice/internal/consumers/delivery"
	"github.com/sluicehq/sluice/internal/consumers/groups"
	"github.com/sluicehq/sluice/internal/envelope"
	"github.com/sluicehq/sluice/internal/kafka"
	"github.com/sluicehq/sluice/internal/keyring"
	"github.com/sluicehq/sluice/internal/standardwebhooks"
	"github.com/sluicehq/sluice/internal/store/endpoints"
	"github.com/sluicehq/sluice/internal/testenv"
)

// targetMessage is one message a target that is not HTTP holds, as its
// receiver reads it.
type targetMessage struct {
	id      string // the message's own id (AMQP message id; Kafka: none)
	headers map[string]string
	body    []byte
}

// targetServer is a target's server as these tests drive it: where the
// endpoint points, a stop and a start of the server, and what it holds.
type targetServer struct {
	endpoint    endpoints.New
	stop, start func(tb testing.TB)
	// messages reads every message the target holds, in the order a
	// consumer of it receives them (per partition for Kafka).
	messages func(t *testing.T) []targetMessage
}

// A RabbitMQ target, through a kill -9 of the delivering process and a
// stop of the server mid-run, holds exactly the endpoint's events, each
// resource's first copies in Kafka's order, every copy with its webhook-id
// as message id and signed; the tenant's HTTP endpoint is not delayed
// while the server is down.
func TestRabbitMQTargetGetsEverythingInOrderThroughKillAndOutage(t *testing.T) {
	t.Parallel()
	rmq := testenv.StartRabbitMQ(t)
	conn, err := amqp.Dial(rmq.AMQPURL())
	if err != nil {
		t.Fatal(err)
	}
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ch.QueueDeclare("tenant-events", true, false, false, false, nil); err != nil {
		t.Fatal(err)
	}
	conn.Close()
	target := targetServer{
		endpoint: endpoints.New{Kind: endpoints.KindRabbitMQ, URL: rmq.URL, Settings: endpoints.TargetSettings{RoutingKey: "tenant-events"},
			Credentials: &endpoints.TargetCredentials{Username: rmq.User, Password: rmq.Password}},
		stop:  rmq.Stop,
		start: rmq.Start,
		messages: func(t *testing.T) []targetMessage {
			conn, err := amqp.Dial(rmq.AMQPURL())
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			ch, err := conn.Channel()
			if err != nil {
				t.Fatal(err)
			}
			var got []targetMessage
			for {
				d, ok, err := ch.Get("tenant-events", true)
				if err != nil {
					t.Fatal(err)
				}
				if !ok {
					return got
				}
				m := targetMessage{id: d.MessageId, headers: map[string]string{}, body: d.Body}
				for k, v := range d.Headers {
					m.headers[k] = fmt.Sprint(v)
				}
				if d.DeliveryMode != amqp.Persistent {
					t.Errorf("message %s is not persistent", d.MessageId)
				}
				got = append(got, m)
			}
		},
	}
	deliverThroughKillAndOutage(t, target)
}

// deliverThroughKillAndOutage runs `sluice consume` (the fan-out and the
// deliverer) on a database of its own for a tenant with target and an HTTP
// endpoint: 300 events over 10 resources, a kill -9 of the process at a
// quarter of them, the target's server stopped at half and 100 events more
// while it is down, then started again.
func deliverThroughKillAndOutage(t *testing.T, target targetServer) {
	ctx := context.Background()
	bin := sluiceBinary(t)
	dbURL, pool := ownDatabase(t, "delivertarget")
	topics := envelope.Topics{Prefix: "dt" + testenv.RandomSuffix() + ".sluice"}
	adm := kadmClient(t)
	if err := kafka.EnsureTopics(ctx, adm, kafka.TopicSpec{Partitions: 3, Retention: time.Hour}, groups.Topics(topics, builtintest.Options(t, topics).Effects)...); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = kafka.DeleteTopicsWithPrefix(context.Background(), adm, topics.Resource("")) })
	var tenant string
	if err := pool.QueryRow(ctx, `INSERT INTO tenants (name) VALUES ('targets') RETURNING id::text`).Scan(&tenant); err != nil {
		t.Fatal(err)
	}
	ring, err := keyring.Parse(suite.secretKey)
	if err != nil {
		t.Fatal(err)
	}
	store := endpoints.Store{Pool: pool, Ring: ring, Limits: endpoints.Limits{AllowHTTP: true}}
	n := target.endpoint
	n.TenantID, n.Filters = tenant, []string{"*"}
	ep, secret, err := store.CreateEndpoint(ctx, n)
	if err != nil {
		t.Fatal(err)
	}
	httpEndpoint, _ := newEndpointIn(t, pool, tenant, newEndpointServer(t, nil).URL, true, "*")

	env := append(os.Environ(),
		"SLUICE_DATABASE_URL="+dbURL,
		"SLUICE_KAFKA_BROKERS="+strings.Join(suite.brokers, ","),
		"SLUICE_TOPIC_PREFIX="+strings.TrimSuffix(topics.Resource(""), "."),
		"SLUICE_SECRET_KEY="+suite.secretKey,
		"SLUICE_DELIVERY_ALLOW_HTTP=true",
		"SLUICE_DELIVERY_ALLOW_NETWORKS=127.0.0.0/8",
		"SLUICE_DELIVERY_TIMEOUT=2s",
		"SLUICE_DELIVERY_BACKOFF=200ms",
		// A broker stopped and started takes a minute: retries and the
		// breaker wait at most 5 s once it is back.
		"SLUICE_DELIVERY_BACKOFF_MAX=5s",
		"SLUICE_LOG_LEVEL=warn",
	)
	const resources = 10
	published := map[string][]string{} // per resource, ce-ids in Kafka's order
	f := consumertest.Fixture{TenantID: tenant, SourceID: "00000000-0000-0000-0000-000000000001", Account: "acct"}
	cl, err := kgo.NewClient(kgo.SeedBrokers(suite.brokers...), kgo.RecordPartitioner(kgo.StickyKeyPartitioner(nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	produce := func(from, to int) {
		t.Helper()
		var recs []*kgo.Record
		for i := from; i < to; i++ {
			id, subject := fmt.Sprintf("tgt-%d", i), fmt.Sprintf("r%d", i%resources)
			ev := f.Event(id, "sluice.email.test", "workspace", subject, time.Now())
			recs = append(recs, consumertest.Record(topics.Resource("notifications"), ev, fmt.Appendf(nil, `{"n":%d}`, i)))
			published[subject] = append(published[subject], id)
		}
		if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	delivered := func(endpoint string) int {
		var n int
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM deliveries WHERE endpoint_id = $1 AND state = 'delivered'`, endpoint).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	until := func(what string, within time.Duration, done func() bool) {
		t.Helper()
		for deadline := time.Now().Add(within); !done(); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within %s (%d delivered to the target, %d to the HTTP endpoint)", what, within, delivered(ep.ID), delivered(httpEndpoint))
			}
		}
	}

	const first, outage = 300, 100
	produce(0, first)
	a := startConsumeProcIn(t, bin, env)
	until("first deliveries", time.Minute, func() bool { return delivered(ep.ID) >= first/4 })
	a.kill(t)
	b := startConsumeProcIn(t, bin, env)
	until("deliveries after the kill", time.Minute, func() bool { return delivered(ep.ID) >= first/2 })

	// The target's server stops: its endpoint's deliveries wait; the
	// HTTP endpoint's do not.
	target.stop(t)
	stopped := time.Now()
	produce(first, first+outage)
	until("the HTTP endpoint's deliveries while the target is down", time.Minute, func() bool { return delivered(httpEndpoint) == first+outage })
	var slowest float64
	if err := pool.QueryRow(ctx, `SELECT coalesce(max(extract(epoch FROM delivered_at - created_at)), 0) FROM deliveries
WHERE endpoint_id = $1 AND created_at >= $2`, httpEndpoint, stopped).Scan(&slowest); err != nil {
		t.Fatal(err)
	}
	if slowest > 5 {
		t.Errorf("while the target was down, the HTTP endpoint's slowest delivery took %.1fs from fan-out to 2xx; want under 5s", slowest)
	}
	var failed int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM delivery_attempts a JOIN deliveries d ON d.id = a.delivery_id
WHERE d.endpoint_id = $1`, ep.ID).Scan(&failed); err != nil {
		t.Fatal(err)
	}
	if failed == 0 || delivered(ep.ID) >= first+outage {
		t.Errorf("while the target was down: %d failed attempts, %d delivered; want failures and deliveries waiting", failed, delivered(ep.ID))
	}
	target.start(t)
	t.Cleanup(func() {
		if t.Failed() {
			logAttempts(t, pool, ep.ID)
		}
	})
	until("every delivery after the target came back", 3*time.Minute, func() bool { return delivered(ep.ID) == first+outage })
	b.stop(t)

	checkTargetMessages(t, target.messages(t), secret, published, first+outage)
}

// logAttempts logs endpoint's last failed attempts.
func logAttempts(t *testing.T, pool *pgxpool.Pool, endpoint string) {
	rows, err := pool.Query(context.Background(), `SELECT at, attempt, error_class, error FROM delivery_attempts
WHERE endpoint_id = $1 ORDER BY at DESC LIMIT 12`, endpoint)
	if err != nil {
		t.Log(err)
		return
	}
	defer rows.Close()
	for rows.Next() {
		var (
			at          time.Time
			n           int
			class, text string
		)
		if err := rows.Scan(&at, &n, &class, &text); err == nil {
			t.Logf("attempt %d at %s: %s: %s", n, at.Format("15:04:05.000"), class, text)
		}
	}
}

// checkTargetMessages checks what a target holds: exactly want webhook-ids
// (repeats allowed: a confirm lost to the kill or the outage), each copy's
// id stable and its signature verifying, each resource's first copies in
// Kafka's order.
func checkTargetMessages(t *testing.T, got []targetMessage, secret string, published map[string][]string, want int) {
	t.Helper()
	key, err := standardwebhooks.Key(secret)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	first := map[string][]string{}
	for _, m := range got {
		id := m.headers["webhook-id"]
		if m.id != "" && m.id != id {
			t.Errorf("message id %q, webhook-id header %q: want the same", m.id, id)
		}
		ts, _ := strconv.ParseInt(m.headers["webhook-timestamp"], 10, 64)
		if sig := standardwebhooks.Signature(key, id, time.Unix(ts, 0), m.body); !slices.Contains(strings.Fields(m.headers["webhook-signature"]), sig) {
			t.Errorf("message %s: its signature does not verify", id)
		}
		if !seen[id] {
			seen[id] = true
			subject := m.headers["ce-subject"]
			first[subject] = append(first[subject], m.headers["ce-id"])
		}
	}
	if len(seen) != want {
		t.Errorf("%d webhook-ids held, want %d", len(seen), want)
	}
	for subject, ids := range published {
		if !slices.Equal(first[subject], ids) {
			t.Errorf("resource %s: first copies %v, want Kafka's order %v", subject, first[subject], ids)
		}
	}
	t.Logf("%d messages for %d events (repeats: confirms lost to the kill or the outage)", len(got), want)
}

// A Kafka target, a cluster of the tenant's own (SASL_SSL, SCRAM, its own
// CA), through a kill -9 of the delivering process and a stop of its
// broker mid-run, holds exactly the endpoint's events, each resource on
// one partition (the record key is the resource key) with its first copies
// in Kafka's order, every copy with its webhook-id header and signed; the
// tenant's HTTP endpoint is not delayed while the cluster is down.
func TestKafkaTargetGetsEverythingInOrderThroughKillAndOutage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tk := testenv.StartTenantKafka(t)
	topic := "tenant-events-" + testenv.RandomSuffix() // the cluster's state outlives the test
	if err := kafka.EnsureTopics(ctx, tk.Admin(), kafka.TopicSpec{Partitions: 3, Retention: time.Hour}, topic); err != nil {
		t.Fatal(err)
	}
	user, password := tk.User, tk.Password
	ca, err := os.ReadFile(tk.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	target := targetServer{
		endpoint: endpoints.New{Kind: endpoints.KindKafka, URL: "kafka://" + tk.SASLSSL[0],
			Settings:    endpoints.TargetSettings{Topic: topic, TLS: true, SASLMechanism: "scram-sha-512", CA: string(ca)},
			Credentials: &endpoints.TargetCredentials{Username: user, Password: password}},
		stop:  tk.Stop,
		start: tk.Start,
		messages: func(t *testing.T) []targetMessage {
			return kafkaTargetMessages(t, tk, topic)
		},
	}
	deliverThroughKillAndOutage(t, target)
}

// kafkaTargetMessages reads the whole topic, partition by partition in
// offset order, checking that each key stays on one partition and is its
// ce-partitionkey header.
func kafkaTargetMessages(t *testing.T, tk *testenv.TenantKafka, topic string) []targetMessage {
	t.Helper()
	ctx := context.Background()
	ends, err := tk.Admin().ListEndOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	left := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Offset > 0 {
			left[o.Partition] = o.Offset
		}
	})
	cl, err := kgo.NewClient(kgo.SeedBrokers(tk.Plain...), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	byPartition := map[int32][]targetMessage{}
	partitionOf := map[string]int32{}
	deadline, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for len(left) > 0 {
		fs := cl.PollFetches(deadline)
		if err := deadline.Err(); err != nil {
			t.Fatalf("reading the tenant's topic: %v (%v left)", err, left)
		}
		fs.EachRecord(func(r *kgo.Record) {
			m := targetMessage{headers: map[string]string{}, body: r.Value}
			for _, h := range r.Headers {
				m.headers[h.Key] = string(h.Value)
			}
			if string(r.Key) != m.headers[delivery.PartitionKeyHeader] {
				t.Errorf("record key %q, %s %q: want the resource key in both", r.Key, delivery.PartitionKeyHeader, m.headers[delivery.PartitionKeyHeader])
			}
			if p, ok := partitionOf[string(r.Key)]; ok && p != r.Partition {
				t.Errorf("resource %s on partitions %d and %d: want one", r.Key, p, r.Partition)
			}
			partitionOf[string(r.Key)] = r.Partition
			byPartition[r.Partition] = append(byPartition[r.Partition], m)
			if r.Offset+1 >= left[r.Partition] {
				delete(left, r.Partition)
			}
		})
	}
	var all []targetMessage
	for _, ms := range byPartition {
		all = append(all, ms...)
	}
	return all
}
