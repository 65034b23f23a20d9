package main

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicehq/sluice/internal/keyring"
	"github.com/sluicehq/sluice/internal/standardwebhooks"
	"github.com/sluicehq/sluice/internal/store/endpoints"
)

// Targets that are not HTTP: the first tenant has, besides its HTTP
// endpoints, an ordered "*" endpoint publishing to a queue of the stack's
// RabbitMQ node and one producing to a topic of the stack's Kafka (a
// tenant's own cluster would be another; this one is killed and restarted
// by the run's Kafka faults, which is the outage that matters here). The
// driver reads what they hold as a tenant's consumer would and checks it as
// it checks the HTTP endpoints' receipts: every event once or more under
// one webhook-id, signed, the first copies of a resource in Kafka's order.
const (
	targetQueue = "tenant-events"
	targetTopic = "tenant-events" // outside the "chaos." prefix the reader takes as the deployment's
)

// targets reads the messages the RabbitMQ and Kafka endpoints published.
type targets struct {
	amqpURL, user, password string
	brokers                 []string
	kafka                   *kgo.Client
}

// newTargets is the run's targets, from the stack's env (dev/chaos/stack.sh
// writes RABBITMQ_URL and its user): a RabbitMQ node is part of the chaos
// stack, and its absence fails the run.
func newTargets(brokers []string) (*targets, error) {
	u := os.Getenv("RABBITMQ_URL")
	if u == "" {
		return nil, errors.New("RABBITMQ_URL is not set: dev/chaos/stack.sh up starts the stack's RabbitMQ node and writes it")
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ConsumeTopics(targetTopic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.MetadataMinAge(time.Second))
	if err != nil {
		return nil, fmt.Errorf("target topic reader: %w", err)
	}
	return &targets{amqpURL: u, user: os.Getenv("RABBITMQ_USER"), password: os.Getenv("RABBITMQ_PASSWORD"), brokers: brokers, kafka: cl}, nil
}

func (g *targets) dial() (*amqp.Connection, error) {
	return amqp.DialConfig(g.amqpURL, amqp.Config{SASL: []amqp.Authentication{&amqp.PlainAuth{Username: g.user, Password: g.password}}})
}

func (g *targets) close() { g.kafka.Close() }

// create declares the queue and the topic and gives tenant its two
// endpoints, through the endpoints store as the admin API would (kind,
// settings, sealed credentials and secret).
func (g *targets) create(ctx context.Context, pool *pgxpool.Pool, secretKey string, adm *kadm.Client, replication int16, tenant string, r *receiver) error {
	conn, err := g.dial()
	if err != nil {
		return fmt.Errorf("rabbitmq: %w", err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		return fmt.Errorf("rabbitmq: %w", err)
	}
	if _, err := ch.QueueDeclare(targetQueue, true, false, false, false, nil); err != nil {
		return fmt.Errorf("rabbitmq queue: %w", err)
	}
	if _, err := adm.CreateTopic(ctx, 6, replication, nil, targetTopic); err != nil {
		return fmt.Errorf("target topic: %w", err)
	}
	ring, err := keyring.Parse(secretKey)
	if err != nil {
		return fmt.Errorf("key ring: %w", err)
	}
	store := endpoints.Store{Pool: pool, Ring: ring, Limits: endpoints.Limits{AllowHTTP: true}}
	for name, n := range map[string]endpoints.New{
		"rabbitmq-0": {Kind: endpoints.KindRabbitMQ, URL: strings.TrimSuffix(g.amqpURL, "/"), Settings: endpoints.TargetSettings{RoutingKey: targetQueue},
			Credentials: &endpoints.TargetCredentials{Username: g.user, Password: g.password}},
		"kafka-0": {Kind: endpoints.KindKafka, URL: "kafka://" + g.brokers[0], Settings: endpoints.TargetSettings{Topic: targetTopic}},
	} {
		n.TenantID, n.Filters = tenant, []string{"*"}
		created, secret, err := store.CreateEndpoint(ctx, n)
		if err != nil {
			return fmt.Errorf("endpoint %s: %w", name, err)
		}
		key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, standardwebhooks.SecretPrefix))
		if err != nil {
			return fmt.Errorf("endpoint %s's secret: %w", name, err)
		}
		r.endpoints[name] = &endpoint{id: created.ID, name: name, tenant: tenant, filters: n.Filters, ordered: true, key: key}
	}
	return nil
}

// read appends to r what the queue and the topic hold that was not read
// yet: the queue's messages taken off it (acknowledged once recorded), the
// topic's records from where the last read stopped. Each is a receipt
// taken (the server confirmed it), in the order a consumer gets them: the
// queue's, and each partition's for the topic.
func (g *targets) read(ctx context.Context, r *receiver) error {
	if err := g.readQueue(r); err != nil {
		return fmt.Errorf("rabbitmq: %w", err)
	}
	for {
		pctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		fs := g.kafka.PollFetches(pctx)
		cancel()
		n := 0
		fs.EachRecord(func(rec *kgo.Record) {
			h := http.Header{}
			for _, kv := range rec.Headers {
				h.Set(kv.Key, string(kv.Value))
			}
			r.take("kafka-0", h, rec.Value)
			n++
		})
		if n == 0 {
			return ctx.Err()
		}
	}
}

func (g *targets) readQueue(r *receiver) error {
	conn, err := g.dial()
	if err != nil {
		return err // the node is down (a fault): read it next time
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		return err
	}
	for {
		d, ok, err := ch.Get(targetQueue, false)
		if err != nil || !ok {
			return err
		}
		h := http.Header{}
		for k, v := range d.Headers {
			h.Set(k, fmt.Sprint(v))
		}
		if d.MessageId != h.Get(standardwebhooks.IDHeader) {
			r.mu.Lock()
			r.badMessageIDs++
			r.mu.Unlock()
		}
		r.take("rabbitmq-0", h, d.Body)
		if err := d.Ack(false); err != nil {
			return err
		}
	}
}

// take records one message a target holds, as the HTTP receiver records a
// request answered 2xx.
func (r *receiver) take(name string, h http.Header, body []byte) {
	ep := r.endpoints[name]
	rc := receipt{webhookID: h.Get(standardwebhooks.IDHeader), identity: h.Get("ce-source") + " " + h.Get("ce-id"),
		eventType: h.Get("ce-type"), signed: verifies(ep.key, h, body), ok: true}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seq++
	rc.seq = r.seq
	r.got[name] = append(r.got[name], rc)
}
