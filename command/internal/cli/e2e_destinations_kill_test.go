package cli

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicehq/sluice/command/internal/effects/builtintest"
	"github.com/sluicehq/sluice/internal/consumers/consumertest"
	"github.com/sluicehq/sluice/internal/consumers/groups"
	"github.com/sluicehq/sluice/internal/envelope"
	"github.com/sluicehq/sluice/internal/kafka"
	"github.com/sluicehq/sluice/internal/testenv"
)

// kill -9 of the delivering process under load, then a rewind of the group
// that feeds the deliveries to the earliest offset: every event reaches
// the endpoint at least once, in Kafka's order per resource, and the rewind
// sends nothing again. The processes are `sluice consume` (the fan-out and
// the deliverer) on a database of their own, so no other deliverer of the
// suite delivers for them.
func TestKillAndRewindOfTheDelivererLoseAndResendNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bin := sluiceBinary(t)
	dbURL, pool := ownDatabase(t, "deliverkill")
	topics := envelope.Topics{Prefix: "dk" + testenv.RandomSuffix() + ".sluice"}
	adm := kadmClient(t)
	if err := kafka.EnsureTopics(ctx, adm, kafka.TopicSpec{Partitions: 3, Retention: time.Hour}, groups.Topics(topics, builtintest.Options(t, topics).Effects)...); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = kafka.DeleteTopicsWithPrefix(context.Background(), adm, topics.Resource("")) })

	var tenant string
	if err := pool.QueryRow(ctx, `INSERT INTO tenants (name) VALUES ('kill') RETURNING id::text`).Scan(&tenant); err != nil {
		t.Fatal(err)
	}
	var (
		mu       sync.Mutex
		requests int
		first    = map[string][]string{} // per resource, ce-ids in order of first receipt
		seen     = map[string]bool{}
	)
	rc := newEndpointServer(t, func(r *http.Request, _ []byte) int {
		mu.Lock()
		defer mu.Unlock()
		requests++
		if id := r.Header.Get("webhook-id"); !seen[id] {
			seen[id] = true
			first[r.Header.Get("ce-subject")] = append(first[r.Header.Get("ce-subject")], r.Header.Get("ce-id"))
		}
		return http.StatusOK
	})
	endpoint, _ := newEndpointIn(t, pool, tenant, rc.URL, true, "*")

	env := append(os.Environ(),
		"SLUICE_DATABASE_URL="+dbURL,
		"SLUICE_KAFKA_BROKERS="+strings.Join(suite.brokers, ","),
		"SLUICE_TOPIC_PREFIX="+strings.TrimSuffix(topics.Resource(""), "."),
		"SLUICE_SECRET_KEY="+suite.secretKey,
		"SLUICE_DELIVERY_ALLOW_HTTP=true",
		"SLUICE_DELIVERY_ALLOW_NETWORKS=127.0.0.0/8",
		// A killed deliverer's leases run out in 5 x 2 s + 30 s.
		"SLUICE_DELIVERY_TIMEOUT=2s",
		"SLUICE_LOG_LEVEL=warn",
	)
	// 600 intents over 20 resources, produced in order: the notifications
	// topic is one the fan-out reads and, without --dispatch-url, no
	// other group.
	const events, resources = 600, 20
	f := consumertest.Fixture{TenantID: tenant, SourceID: "00000000-0000-0000-0000-000000000001", Account: "acct"}
	cl, err := kgo.NewClient(kgo.SeedBrokers(suite.brokers...), kgo.RecordPartitioner(kgo.StickyKeyPartitioner(nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	published := map[string][]string{}
	var recs []*kgo.Record
	for i := range events {
		id := fmt.Sprintf("kill-%d", i)
		subject := fmt.Sprintf("r%d", i%resources)
		ev := f.Event(id, "sluice.email.test", "workspace", subject, time.Now())
		recs = append(recs, consumertest.Record(topics.Resource("notifications"), ev, fmt.Appendf(nil, `{"n":%d}`, i)))
		published[subject] = append(published[subject], id)
	}
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	delivered := func() int {
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
				t.Fatalf("%s: not within %s (%d delivered)", what, within, delivered())
			}
		}
	}

	// kill -9 in the middle of the deliveries.
	a := startConsumeProcIn(t, bin, env)
	until("first deliveries", time.Minute, func() bool { return delivered() >= events/4 })
	a.kill(t)
	b := startConsumeProcIn(t, bin, env)
	until("every delivery after the kill", 2*time.Minute, func() bool { return delivered() == events })
	mu.Lock()
	for subject, want := range published {
		if !slices.Equal(first[subject], want) {
			t.Errorf("resource %s: first receipts %v, want Kafka's order %v", subject, first[subject], want)
		}
	}
	if len(seen) != events {
		t.Errorf("%d webhook-ids received, want %d", len(seen), events)
	}
	before := requests
	mu.Unlock()
	t.Logf("%d requests for %d events across the kill (repeats: sends the kill interrupted)", before, events)

	// Rewind the fan-out's group to the earliest offset: it reads every
	// record again and inserts, so sends, nothing.
	b.stop(t)
	group := topics.Resource("destinations")
	topic := topics.Resource("notifications")
	starts, err := adm.ListStartOffsets(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := adm.CommitOffsets(ctx, group, starts.Offsets()); err != nil {
		t.Fatal(err)
	}
	c := startConsumeProcIn(t, bin, env)
	until("the rewound group back at the end", 2*time.Minute, func() bool {
		committed, end := progress(ctx, adm, group, topic)
		return end > 0 && committed >= end
	})
	c.stop(t)
	var rows int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM deliveries WHERE endpoint_id = $1`, endpoint).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if rows != events || requests != before {
		t.Errorf("after the rewind: %d deliveries and %d requests, want %d and %d (nothing sent again)", rows, requests, events, before)
	}
}
