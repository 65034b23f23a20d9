package cli

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicehq/sluice/command/internal/effects/builtintest"
	"github.com/sluicehq/sluice/command/internal/pipeline"
	"github.com/sluicehq/sluice/internal/consumers/consumertest"
	"github.com/sluicehq/sluice/internal/consumers/delivery"
	"github.com/sluicehq/sluice/internal/consumers/groups"
	"github.com/sluicehq/sluice/internal/egress"
	"github.com/sluicehq/sluice/internal/envelope"
	"github.com/sluicehq/sluice/internal/kafka"
	"github.com/sluicehq/sluice/internal/testenv"
)

// While no endpoint is enabled the fan-out's group has no member, and its
// commits still follow the topics' ends, so Kafka UI shows no lag and an
// endpoint created later starts from there: it receives every event
// accepted after it, none from before. Disabled again, the group leaves and
// skips; enabled, it delivers what follows. A pipeline of its own
// (`sluice consume`, in process) on a database of its own: the suite's
// endpoints would keep the group running.
func TestTheFanOutReadsOnlyWhileAnEndpointIsEnabled(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dbURL, pool := ownDatabase(t, "fanoutgate")
	topics := envelope.Topics{Prefix: "fg" + testenv.RandomSuffix() + ".sluice"}
	adm := kadmClient(t)
	if err := kafka.EnsureTopics(ctx, adm, kafka.TopicSpec{Partitions: 3, Retention: time.Hour}, groups.Topics(topics, builtintest.Options(t, topics).Effects)...); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = kafka.DeleteTopicsWithPrefix(context.Background(), adm, topics.Resource("")) })
	var tenant string
	if err := pool.QueryRow(ctx, `INSERT INTO tenants (name) VALUES ('gate') RETURNING id::text`).Scan(&tenant); err != nil {
		t.Fatal(err)
	}
	group, topic := topics.Resource("destinations"), topics.Resource("notifications")

	cl, err := kgo.NewClient(kgo.SeedBrokers(suite.brokers...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	f := consumertest.Fixture{TenantID: tenant, SourceID: "00000000-0000-0000-0000-000000000001", Account: "acct"}
	produce := func(from, n int) {
		t.Helper()
		var recs []*kgo.Record
		for i := from; i < from+n; i++ {
			ev := f.Event(fmt.Sprintf("gate-%d", i), "sluice.email.test", "workspace", fmt.Sprintf("r%d", i%5), time.Now())
			recs = append(recs, consumertest.Record(topic, ev, fmt.Appendf(nil, `{"n":%d}`, i)))
		}
		if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	// skipped waits until the group has no member and has committed the
	// topic's end on every partition: only the gate moves it so.
	skipped := func(what string) {
		t.Helper()
		testenv.Eventually(t, time.Minute, what, func() (bool, error) {
			described, err := adm.DescribeGroups(ctx, group)
			if err != nil {
				return false, err
			}
			if d := described[group]; d.Err != nil || d.State != "Empty" {
				return false, fmt.Errorf("group %s: state %q, %d members (%v)", group, d.State, len(d.Members), d.Err)
			}
			ends, err := adm.ListEndOffsets(ctx, topic)
			if err != nil {
				return false, err
			}
			committed, err := adm.FetchOffsets(ctx, group)
			if err != nil {
				return false, err
			}
			behind := 0
			ends.Each(func(end kadm.ListedOffset) {
				if c, ok := committed.Lookup(topic, end.Partition); !ok && end.Offset > 0 || ok && c.At < end.Offset {
					behind++
				}
			})
			if behind > 0 {
				return false, fmt.Errorf("%d partitions of %s committed behind their end", behind, topic)
			}
			return true, nil
		})
	}
	delivered := func() []string {
		t.Helper()
		rows, err := pool.Query(ctx, `SELECT event_id FROM deliveries WHERE tenant_id = $1 AND state = 'delivered' ORDER BY event_id`, tenant)
		if err != nil {
			t.Fatal(err)
		}
		ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		return ids
	}

	produce(0, 40) // accepted before any endpoint
	pctx, stop := context.WithCancel(ctx)
	p, err := pipeline.Start(pctx, pipeline.Config{
		DatabaseURL: dbURL, SecretKey: suite.secretKey, Kafka: kafka.Config{Brokers: suite.brokers},
		HTTPAddr: "127.0.0.1:0", AdminAddr: "127.0.0.1:0", Topics: topics,
		TopicSpec: kafka.TopicSpec{Partitions: 3, Retention: time.Hour},
		Consume:   true, Deliver: true, EndpointsRefresh: 50 * time.Millisecond, FanOutIdle: time.Millisecond,
		Delivery: delivery.Config{Client: egress.NewClient(egress.Config{Policy: egress.Policy{Allow: loopback}}),
			BackoffBase: 20 * time.Millisecond, BackoffMax: 200 * time.Millisecond, Refresh: 50 * time.Millisecond},
	}, slog.New(slog.DiscardHandler))
	if err != nil {
		stop()
		t.Fatal(err)
	}
	t.Cleanup(func() { stop(); _ = p.Wait() })
	skipped("the fan-out held stopped past the events before any endpoint")

	rc := newEndpointServer(t, nil)
	endpoint, _ := newEndpointIn(t, pool, tenant, rc.URL, false, "*")
	produce(40, 30) // accepted after it
	var want []string
	for i := 40; i < 70; i++ {
		want = append(want, fmt.Sprintf("gate-%d", i))
	}
	testenv.Eventually(t, time.Minute, "the events after the endpoint delivered", func() (bool, error) {
		return len(delivered()) >= len(want), nil
	})

	if _, err := pool.Exec(ctx, `UPDATE endpoints SET disabled_at = now() WHERE id = $1`, endpoint); err != nil {
		t.Fatal(err)
	}
	skipped("the fan-out stopped once no endpoint was enabled")
	produce(70, 20)
	skipped("the fan-out held stopped past the events while the endpoint was disabled")

	if _, err := pool.Exec(ctx, `UPDATE endpoints SET disabled_at = NULL WHERE id = $1`, endpoint); err != nil {
		t.Fatal(err)
	}
	produce(90, 10)
	for i := 90; i < 100; i++ {
		want = append(want, fmt.Sprintf("gate-%d", i))
	}
	slices.Sort(want)
	testenv.Eventually(t, time.Minute, "the events after the endpoint was enabled again delivered", func() (bool, error) {
		return len(delivered()) >= len(want), nil
	})
	if got := delivered(); !slices.Equal(got, want) {
		t.Fatalf("delivered %v,\nwant the events accepted while the endpoint was enabled: %v", got, want)
	}
}
