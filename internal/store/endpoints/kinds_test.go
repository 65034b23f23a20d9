package endpoints_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/internal/refusal"
	"github.com/sluicehq/sluice/internal/store/endpoints"
)

// A rabbitmq or kafka endpoint keeps its credentials sealed: the row holds
// no password, reads say only that there are credentials, and the
// deliverer's target opens them; a patch of its settings keeps them.
func TestTargetCredentialsAreSealedAndOpenedOnlyForTheDeliverer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t, endpoints.Limits{})
	const password = "tenant-broker-password"
	e, _ := create(t, s, endpoints.New{TenantID: newTenant(t), URL: "amqps://mq.example/orders", Kind: endpoints.KindRabbitMQ,
		Settings:    endpoints.TargetSettings{Exchange: "events", RoutingKey: "orders"},
		Credentials: &endpoints.TargetCredentials{Username: "orders", Password: password}})
	shown, _ := json.Marshal(e)
	if e.Kind != endpoints.KindRabbitMQ || !e.HasCredentials || e.Settings == nil || e.Settings.RoutingKey != "orders" || bytes.Contains(shown, []byte(password)) {
		t.Errorf("endpoint as read: %s; want kind rabbitmq, its settings, has_credentials and no password", shown)
	}
	var sealed []byte
	if err := pool.QueryRow(ctx, `SELECT target_sealed FROM endpoints WHERE id = $1`, e.ID).Scan(&sealed); err != nil {
		t.Fatal(err)
	}
	if len(sealed) == 0 || bytes.Contains(sealed, []byte(password)) {
		t.Errorf("stored credentials %q: want them sealed", sealed)
	}
	tg, ok := target(t, s, e.ID)
	if !ok || tg.Kind != endpoints.KindRabbitMQ || tg.Credentials == nil || tg.Credentials.Password != password || tg.Settings.Exchange != "events" {
		t.Fatalf("target: %+v; want the kind, the settings and the credentials opened", tg)
	}
	set := endpoints.TargetSettings{RoutingKey: "orders.v2"}
	if _, err := s.UpdateEndpoint(ctx, e.ID, endpoints.Patch{Settings: &set}); err != nil {
		t.Fatal(err)
	}
	if tg, _ := target(t, s, e.ID); tg.Settings != set || tg.Credentials == nil || tg.Credentials.Password != password {
		t.Errorf("after a patch of the settings: %+v; want the new settings and the same credentials", tg)
	}
}

// Each kind has its URLs and settings: anything else is refused as
// invalid, naming the field.
func TestTargetOutsideItsKindsRulesIsRefused(t *testing.T) {
	t.Parallel()
	tenant := newTenant(t)
	strict := newStore(t, endpoints.Limits{})
	strict.CheckURL = func(raw string) error {
		if strings.Contains(raw, "127.0.0.1") {
			return errors.New("loopback")
		}
		return nil
	}
	rabbit := endpoints.TargetSettings{RoutingKey: "q"}
	kafka := endpoints.TargetSettings{Topic: "t", TLS: true}
	cred := &endpoints.TargetCredentials{Username: "u", Password: "p"}
	queue, region := "https://sqs.eu-west-1.amazonaws.com/123456789012/orders.fifo", endpoints.TargetSettings{Region: "eu-west-1"}
	for _, c := range []struct {
		name  string
		n     endpoints.New
		field string
	}{
		{"http with settings", endpoints.New{URL: "https://r.example/", Settings: rabbit}, "settings"},
		{"unknown kind", endpoints.New{URL: "https://r.example/", Kind: "sns"}, "kind"},
		{"rabbitmq over https", endpoints.New{URL: "https://r.example/", Kind: endpoints.KindRabbitMQ, Settings: rabbit}, "url"},
		{"plain amqp", endpoints.New{URL: "amqp://mq.example/", Kind: endpoints.KindRabbitMQ, Settings: rabbit}, "url"},
		{"user in the URL", endpoints.New{URL: "amqps://u:p@mq.example/", Kind: endpoints.KindRabbitMQ, Settings: rabbit}, "url"},
		{"loopback", endpoints.New{URL: "amqps://127.0.0.1/", Kind: endpoints.KindRabbitMQ, Settings: rabbit}, "url"},
		{"no routing key", endpoints.New{URL: "amqps://mq.example/", Kind: endpoints.KindRabbitMQ}, "settings.routing_key"},
		{"rabbitmq with a topic", endpoints.New{URL: "amqps://mq.example/", Kind: endpoints.KindRabbitMQ, Settings: endpoints.TargetSettings{RoutingKey: "q", Topic: "t"}}, "settings"},
		{"headers on rabbitmq", endpoints.New{URL: "amqps://mq.example/", Kind: endpoints.KindRabbitMQ, Settings: rabbit, Headers: map[string]string{"X-A": "b"}}, "headers"},
		{"kafka without tls", endpoints.New{URL: "kafka://k.example:9093", Kind: endpoints.KindKafka, Settings: endpoints.TargetSettings{Topic: "t"}}, "url"},
		{"kafka with a path", endpoints.New{URL: "kafka://k.example:9093/t", Kind: endpoints.KindKafka, Settings: kafka}, "url"},
		{"kafka without a topic", endpoints.New{URL: "kafka://k.example:9093", Kind: endpoints.KindKafka, Settings: endpoints.TargetSettings{TLS: true}}, "settings.topic"},
		{"sasl without credentials", endpoints.New{URL: "kafka://k.example:9093", Kind: endpoints.KindKafka, Settings: endpoints.TargetSettings{Topic: "t", TLS: true, SASLMechanism: "plain"}}, "credentials"},
		{"unknown sasl", endpoints.New{URL: "kafka://k.example:9093", Kind: endpoints.KindKafka, Settings: endpoints.TargetSettings{Topic: "t", TLS: true, SASLMechanism: "gssapi"}, Credentials: cred}, "settings.sasl_mechanism"},
		{"sqs over amqps", endpoints.New{URL: "amqps://sqs.example/1/q", Kind: endpoints.KindSQS, Settings: region, Credentials: cred}, "url"},
		{"plain sqs", endpoints.New{URL: "http://sqs.example/1/q", Kind: endpoints.KindSQS, Settings: region, Credentials: cred}, "url"},
		{"sqs without a queue", endpoints.New{URL: "https://sqs.eu-west-1.amazonaws.com/", Kind: endpoints.KindSQS, Settings: region, Credentials: cred}, "url"},
		{"sqs with a query", endpoints.New{URL: queue + "?Action=SendMessage", Kind: endpoints.KindSQS, Settings: region, Credentials: cred}, "url"},
		{"sqs on loopback", endpoints.New{URL: "https://127.0.0.1/1/q", Kind: endpoints.KindSQS, Settings: region, Credentials: cred}, "url"},
		{"sqs without a region", endpoints.New{URL: queue, Kind: endpoints.KindSQS, Credentials: cred}, "settings.region"},
		{"sqs with an odd region", endpoints.New{URL: queue, Kind: endpoints.KindSQS, Settings: endpoints.TargetSettings{Region: "EU West"}, Credentials: cred}, "settings.region"},
		{"sqs with a topic", endpoints.New{URL: queue, Kind: endpoints.KindSQS, Settings: endpoints.TargetSettings{Region: "eu-west-1", Topic: "t"}, Credentials: cred}, "settings"},
		{"sqs without credentials", endpoints.New{URL: queue, Kind: endpoints.KindSQS, Settings: region}, "credentials"},
		{"kafka with a region", endpoints.New{URL: "kafka://k.example:9093", Kind: endpoints.KindKafka, Settings: endpoints.TargetSettings{Topic: "t", TLS: true, Region: "eu-west-1"}}, "settings"},
		{"a CA that is none", endpoints.New{URL: "kafka://k.example:9093", Kind: endpoints.KindKafka, Settings: endpoints.TargetSettings{Topic: "t", TLS: true, CA: "nope"}}, "settings.ca"},
	} {
		c.n.TenantID, c.n.Filters = tenant, []string{"*"}
		_, _, err := strict.CreateEndpoint(context.Background(), c.n)
		if !errors.Is(err, refusal.ErrInvalid) || !strings.HasPrefix(err.Error(), c.field+":") {
			t.Errorf("%s: %v; want invalid %s", c.name, err, c.field)
		}
	}
	if _, _, err := strict.CreateEndpoint(context.Background(), endpoints.New{TenantID: tenant, Filters: []string{"*"}, URL: queue,
		Kind: endpoints.KindSQS, Settings: region, Credentials: cred}); err != nil {
		t.Errorf("an sqs endpoint with its queue URL, region and access key: %v; want it created", err)
	}
}
