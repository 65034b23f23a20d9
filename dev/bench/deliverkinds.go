package main

import (
	"context"
	"fmt"
	"log"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicehq/sluice/internal/keyring"
	"github.com/sluicehq/sluice/internal/store/endpoints"
	"github.com/sluicehq/sluice/internal/testenv"
)

// The deliver step's kinds: beside its HTTP windows, paced windows per
// other way of sending, each to endpoints of its own for the same tenants,
// alternating with the HTTP endpoints (kindWindows), so each figure sits
// beside HTTP's:
//
//	rabbitmq       a queue of a RabbitMQ node the step starts (Debian's
//	               rabbitmq-server, dev/rabbitmq/rabbitmq.sh), publisher
//	               confirms; the node's own CPU is not in the figures
//	kafka          a topic of the bench's own Kafka (a tenant's cluster
//	               would be another): Kafka's figure holds both sides
//	http_filtered  HTTP, each endpoint with a filter expression over the
//	               event's body that takes every event, so the fan-out
//	               loads and evaluates it for every event and endpoint
//	http_transformed HTTP, each endpoint with a transformation wrapping
//	               the event's data, evaluated at every send
//
// The bench reads the queue and the topic in its process and counts an
// arrival per CloudEvents id, as the HTTP receiver does.
type deliverKind struct {
	name string
	new  func(tenant string, i int) endpoints.New
}

// kindTransformation reshapes every body: a wrapper around the event's
// data with fields of its envelope.
const kindTransformation = `{"id": id, "kind": type, "subject": subject, "data": data}`

// kindFilter takes every event the generator sends (Stripe invoices, and
// the e-mail intents of their grants), read from the body.
const kindFilter = `body == null || type != ""`

func (b *bench) deliverKinds(ctx context.Context, p *proc, w *deliverWorld) error {
	rmq, err := startBenchRabbitMQ(ctx, b.outDir)
	if err != nil {
		return err
	}
	defer rmq.down()
	if err := rmq.consume(ctx, w.recv); err != nil {
		return err
	}
	topic := b.prefix + "-target-events"
	stopTopic, err := b.consumeTopic(ctx, topic, w.recv)
	if err != nil {
		return err
	}
	defer stopTopic()
	ring, err := keyring.Parse(b.secretKey)
	if err != nil {
		return err
	}
	store := endpoints.Store{Pool: b.pool, Ring: ring, Limits: endpoints.Limits{AllowHTTP: true}}
	kinds := []deliverKind{
		{"rabbitmq", func(string, int) endpoints.New {
			return endpoints.New{Kind: endpoints.KindRabbitMQ, URL: rmq.url, Settings: endpoints.TargetSettings{RoutingKey: benchQueue},
				Credentials: &endpoints.TargetCredentials{Username: rmq.user, Password: rmq.password}}
		}},
		{"kafka", func(string, int) endpoints.New {
			return endpoints.New{Kind: endpoints.KindKafka, URL: "kafka://" + strings.Split(b.brokers, ",")[0], Settings: endpoints.TargetSettings{Topic: topic}}
		}},
		{"http_filtered", func(_ string, i int) endpoints.New {
			return endpoints.New{URL: fmt.Sprintf("%s/filtered/%d", w.recv.url(i), i), Expression: kindFilter}
		}},
		{"http_transformed", func(_ string, i int) endpoints.New {
			return endpoints.New{URL: fmt.Sprintf("%s/transformed/%d", w.recv.url(i), i), Transformation: kindTransformation}
		}},
	}
	// The isolation windows may end with the bad endpoints enabled: their
	// retries would be counted in these windows.
	if err := b.setBad(ctx, w, false); err != nil {
		return err
	}
	for _, k := range kinds {
		ids, err := b.kindEndpoints(ctx, store, w, k)
		if err != nil {
			return err
		}
		if err := b.kindWindows(ctx, p, w, k.name, ids); err != nil {
			return err
		}
	}
	return nil
}

// kindEndpoints gives each of the saturated windows' tenants an endpoint of
// kind k, taking every event, disabled until its windows.
func (b *bench) kindEndpoints(ctx context.Context, store endpoints.Store, w *deliverWorld, k deliverKind) ([]string, error) {
	var ids []string
	for i, s := range w.with {
		n := k.new(s.tenantID, i)
		n.TenantID, n.Filters = s.tenantID, []string{"*"}
		ep, _, err := store.CreateEndpoint(ctx, n)
		if err != nil {
			return nil, fmt.Errorf("deliver %s: endpoint: %w", k.name, err)
		}
		ids = append(ids, ep.ID)
	}
	_, err := b.pool.Exec(ctx, `UPDATE endpoints SET disabled_at = now(), disabled_reason = 'operator' WHERE id = ANY($1)`, ids)
	return ids, err
}

// swapEndpoints disables off and enables on, and waits until the fan-out
// and the deliverer both see it.
func (b *bench) swapEndpoints(ctx context.Context, off, on []string) error {
	if _, err := b.pool.Exec(ctx, `UPDATE endpoints SET disabled_at = now(), disabled_reason = 'operator' WHERE id = ANY($1)`, off); err != nil {
		return err
	}
	if _, err := b.pool.Exec(ctx, `UPDATE endpoints SET disabled_at = NULL, disabled_reason = NULL WHERE id = ANY($1)`, on); err != nil {
		return err
	}
	select {
	case <-time.After(endpointRefresh):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// kindWindows alternates paced windows (kindRate events/s to the same
// tenants) between the kind's endpoints and the HTTP ones, one pair quick
// and two full, each counted from its first request to the arrival of the
// last event it was answered 2xx for: the same load and the same span on
// both sides, so the difference of their CPU per delivery is the kind's
// own, and the kind's figure is HTTP's (from the saturated windows) plus
// it. (A saturated window's count runs on to the vacuum after it, which
// grows with every window of the step: right for HTTP's figure beside its
// alternate without endpoints, not for a comparison of windows minutes
// apart.)
func (b *bench) kindWindows(ctx context.Context, p *proc, w *deliverWorld, kind string, ids []string) error {
	diff := map[string][]float64{}
	var rates []float64
	for range pick(b.quick, 1, 2) {
		if err := b.swapEndpoints(ctx, w.withEndpoints, ids); err != nil {
			return err
		}
		k, err := b.pacedKindWindow(ctx, p, w, kind)
		if err != nil {
			return err
		}
		if err := b.swapEndpoints(ctx, ids, w.withEndpoints); err != nil {
			return err
		}
		h, err := b.pacedKindWindow(ctx, p, w, "http")
		if err != nil {
			return err
		}
		rates = append(rates, k.rate)
		for _, name := range []string{"sluice", "postgres", "kafka"} {
			diff[name] = append(diff[name], k.perDelivery(name)-h.perDelivery(name))
		}
	}
	b.results["deliver_"+kind+"_events_per_s"] = median(rates)
	for _, name := range []string{"sluice", "postgres", "kafka"} {
		b.results["deliver_"+kind+"_"+name+"_cpu_us_per_delivery"] = b.results["deliver_"+name+"_cpu_us_per_delivery"] + median(diff[name])
	}
	if h := b.results["deliver_sluice_cpu_us_per_delivery"]; h > 0 {
		b.results["deliver_"+kind+"_sluice_cpu_ratio_of_http"] = b.results["deliver_"+kind+"_sluice_cpu_us_per_delivery"] / h
	}
	log.Printf("deliver %s: per delivery beyond HTTP's in the paced windows: sluice %+.0f us, postgres %+.0f us, kafka %+.0f us; sluice %.2fx http's", kind,
		median(diff["sluice"]), median(diff["postgres"]), median(diff["kafka"]), b.results["deliver_"+kind+"_sluice_cpu_ratio_of_http"])
	return nil
}

// kindRate is the kinds' paced windows' rate: below every kind's
// saturation, so both sides of a pair carry the same load.
const kindRate = 500

// pacedWindow is one paced window's figures.
type pacedWindow struct {
	rate       float64
	deliveries float64
	used       cpuSample
}

func (pw pacedWindow) perDelivery(name string) float64 {
	return float64(pw.used[name].Microseconds()) / pw.deliveries
}

// pacedKindWindow paces kindRate events/s to the saturated windows'
// tenants for the step's window and counts until every event answered 2xx
// arrived.
func (b *bench) pacedKindWindow(ctx context.Context, p *proc, w *deliverWorld, kind string) (pacedWindow, error) {
	g := b.generatorOf(b.stageAddr, conns, w.with)
	ans := track(g, nil)
	before, requests := b.cpu.sample(p), w.recv.requests.Load()
	r := g.paced(kindRate, conns, b.deliverWindow())
	missing, err := w.recv.waitAll(ctx, ans.ids(), b.stall())
	if err != nil {
		return pacedWindow{}, err
	}
	b.undelivered(missing)
	after := b.cpu.sample(p)
	pw := pacedWindow{rate: r.rate(), deliveries: float64(w.recv.requests.Load() - requests), used: cpuSample{}}
	for name, t := range after {
		pw.used[name] = t - before[name]
	}
	log.Printf("deliver %s, paced: %.0f accepted/s (%d errors), %.0f delivered; per delivery sluice %.0f us, postgres %.0f us, kafka %.0f us",
		kind, r.rate(), r.errors, pw.deliveries, pw.perDelivery("sluice"), pw.perDelivery("postgres"), pw.perDelivery("kafka"))
	return pw, nil
}

// benchQueue is the queue the RabbitMQ endpoints publish to.
const benchQueue = "bench-events"

// benchRabbitMQ is the step's RabbitMQ node.
type benchRabbitMQ struct {
	dir, url, user, password string
	conn                     *amqp.Connection
}

// startBenchRabbitMQ starts a node on free ports (its AMQP port and the
// two after it) under dir, and declares the queue.
func startBenchRabbitMQ(ctx context.Context, outDir string) (*benchRabbitMQ, error) {
	port, err := testenv.FreePorts(3)
	if err != nil {
		return nil, err
	}
	r := &benchRabbitMQ{dir: filepath.Join(outDir, "rabbitmq")}
	_ = r.script(ctx, "down")
	if err := r.script(ctx, "up", port); err != nil {
		return nil, err
	}
	env, err := testenv.ReadEnv(filepath.Join(r.dir, "env"))
	if err != nil {
		return nil, err
	}
	r.url, r.user, r.password = strings.TrimSuffix(env["RABBITMQ_URL"], "/"), env["RABBITMQ_USER"], env["RABBITMQ_PASSWORD"]
	if r.conn, err = amqp.DialConfig(r.url, amqp.Config{SASL: []amqp.Authentication{&amqp.PlainAuth{Username: r.user, Password: r.password}}}); err != nil {
		r.down()
		return nil, fmt.Errorf("rabbitmq: %w", err)
	}
	return r, nil
}

func (r *benchRabbitMQ) script(ctx context.Context, args ...string) error {
	cmd := exec.CommandContext(ctx, "bash", append([]string{"dev/rabbitmq/rabbitmq.sh", args[0], r.dir}, args[1:]...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("rabbitmq.sh %s: %w: %s", args[0], err, out)
	}
	return nil
}

// consume declares the queue and records every message's arrival at rc.
func (r *benchRabbitMQ) consume(ctx context.Context, rc *receiver) error {
	ch, err := r.conn.Channel()
	if err != nil {
		return err
	}
	if _, err := ch.QueueDeclare(benchQueue, true, false, false, false, nil); err != nil {
		return fmt.Errorf("rabbitmq queue: %w", err)
	}
	if err := ch.Qos(1000, 0, false); err != nil {
		return err
	}
	msgs, err := ch.ConsumeWithContext(ctx, benchQueue, "bench", true, false, false, false, nil)
	if err != nil {
		return fmt.Errorf("rabbitmq consume: %w", err)
	}
	go func() {
		for d := range msgs {
			rc.arrive(fmt.Sprint(d.Headers["ce-id"]), time.Now())
		}
	}()
	return nil
}

func (r *benchRabbitMQ) down() {
	if r.conn != nil {
		_ = r.conn.Close()
	}
	if err := r.script(context.Background(), "down"); err != nil {
		log.Printf("deliver: %v", err)
	}
}

// consumeTopic makes topic and records every record's arrival at rc until
// the returned stop.
func (b *bench) consumeTopic(ctx context.Context, topic string, rc *receiver) (func(), error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(b.brokers, ",")...), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.MetadataMinAge(time.Second))
	if err != nil {
		return nil, err
	}
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 6, 1, nil, topic); err != nil {
		cl.Close()
		return nil, fmt.Errorf("target topic: %w", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for cctx.Err() == nil {
			cl.PollFetches(cctx).EachRecord(func(rec *kgo.Record) {
				for _, h := range rec.Headers {
					if h.Key == "ce-id" {
						rc.arrive(string(h.Value), time.Now())
					}
				}
			})
		}
	}()
	return func() {
		cancel()
		<-done
		_, _ = kadm.NewClient(cl).DeleteTopics(context.Background(), topic)
		cl.Close()
	}, nil
}
