package delivery_test

import (
	"context"
	"io"
	"log/slog"
	"net/netip"
	"os"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/consumers/delivery"
	"github.com/sluicehq/sluice/internal/egress"
	"github.com/sluicehq/sluice/internal/kafka"
	"github.com/sluicehq/sluice/internal/store/endpoints"
	"github.com/sluicehq/sluice/internal/testenv"
)

// A Kafka target's attempt is acknowledged, or fails within the timeout
// while the cluster is down, and the same sender (the loop's, kept for
// the endpoint's life) is acknowledged again once the cluster is back. A
// policy refusing the brokers' addresses fails every attempt, refused.
func TestKafkaTargetIsAcknowledgedOrFailsAndRecovers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tk := testenv.StartTenantKafka(t)
	topic := "tenant-events-" + testenv.RandomSuffix() // the cluster's state outlives the test
	if err := kafka.EnsureTopics(ctx, tk.Admin(), kafka.TopicSpec{Partitions: 1, Retention: time.Hour}, topic); err != nil {
		t.Fatal(err)
	}
	user, password := tk.User, tk.Password
	ca, err := os.ReadFile(tk.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t)
	store := endpoints.Store{Pool: e.pool, Ring: e.ring}
	ep, _, err := store.CreateEndpoint(ctx, endpoints.New{TenantID: e.tenant, URL: "kafka://" + tk.SASLSSL[0], Filters: []string{"*"},
		Kind: endpoints.KindKafka, Settings: endpoints.TargetSettings{Topic: topic, TLS: true, SASLMechanism: "scram-sha-512", CA: string(ca)},
		Credentials: &endpoints.TargetCredentials{Username: user, Password: password}})
	if err != nil {
		t.Fatal(err)
	}
	tg, _, err := store.Target(ctx, ep.ID)
	if err != nil {
		t.Fatal(err)
	}
	deliverer := func(allow ...netip.Prefix) *delivery.Deliverer {
		policy := egress.Policy{Allow: allow}
		return delivery.New(delivery.Config{Client: egress.NewClient(egress.Config{Policy: policy}), Timeout: 3 * time.Second,
			Dial: egress.NewDialer(egress.Config{Policy: policy, ConnectTimeout: time.Second}).DialContext},
			slog.New(slog.NewTextHandler(io.Discard, nil)), e.pool, store)
	}
	refused := deliverer().NewSender(tg)
	defer refused.Close()
	if a := refused.Send(ctx, "k", "refused"); a.ErrorClass != egress.ClassRefusedAddress {
		t.Errorf("attempt under a policy refusing loopback: %+v; want refused_address", a)
	}
	s := deliverer(netip.MustParsePrefix("127.0.0.1/32")).NewSender(tg)
	defer s.Close()
	if a := s.Send(ctx, "k", "first"); !a.OK() {
		t.Fatalf("first attempt: %+v; want acknowledged", a)
	}
	tk.Stop(t)
	start := time.Now()
	if a := s.Send(ctx, "k", "down"); a.OK() || time.Since(start) > 10*time.Second {
		t.Errorf("attempt while the cluster is down: %+v after %s; want a failure within the timeout", a, time.Since(start))
	}
	tk.Start(t)
	back := time.Now()
	for i := 0; ; i++ {
		a := s.Send(ctx, "k", "back")
		if a.OK() {
			t.Logf("acknowledged %s after the cluster's start (%d attempts failed meanwhile)", time.Since(back).Round(time.Millisecond), i)
			break
		}
		if time.Since(back) > time.Minute {
			t.Fatalf("no attempt acknowledged within a minute of the cluster's start; the last: %+v", a)
		}
	}
}
