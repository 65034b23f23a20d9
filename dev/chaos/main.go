// Command chaos proves Sluice's invariants under crashes, outages and
// hostile senders (`make chaos`; CHAOS_QUICK=1 for the short run). It runs
// sluice stages as processes against the chaos stack of dev/chaos/stack.sh
// (its own Postgres and Kafka), drives a seeded load through ingest while it
// kills, pauses and restarts them and Kafka at random moments, then drains
// and checks every invariant from Postgres and Kafka directly. It prints a
// report, writes .run/chaos/report.json and exits non-zero on any violation.
// CHAOS_SEED replays a run.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicehq/sluice/internal/keyring"
)

// chaos is one run.
type chaos struct {
	log         *slog.Logger
	rng         *rand.Rand // the fault schedule's; the plan has its own
	seed        uint64
	quick       bool
	runDir      string
	stackScript string
	brokers     []string
	pool        *pgxpool.Pool
	fleet       *fleet
	tenants     []*tenant
	plan        *plan
	sender      *sender
	reader      *kafkaReader
	groupLog    *groupLog
	adm         *kadm.Client
	groups      []string // the consumer groups of the run

	// windows are the start-up and each fault, in order: what may
	// rebalance a group and from when.
	windows []*window

	ingests, relays, consumers []string
	ingestURLs                 []string  // each ingest instance's
	kafkaBack                  time.Time // when the broker answered again after the last outage
	proxy                      *proxy    // between the consumers and Postgres, full run only
	receiver                   *receiver // the tenants' endpoints
	targets                    *targets  // the RabbitMQ and Kafka endpoints' servers; nil in the upgrade run
	upgrade                    *upgrade  // the upgrade run's (CHAOS_UPGRADE=1); nil otherwise
	balancer                   *balancer // in front of the ingest instances, upgrade run only

	mu     sync.Mutex
	report *report
}

func main() {
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	code, err := run(ctx, log)
	if err != nil {
		log.Error("chaos run failed", slog.Any("error", err))
		os.Exit(2)
	}
	os.Exit(code)
}

func run(ctx context.Context, log *slog.Logger) (int, error) {
	root, err := os.Getwd()
	if err != nil {
		return 0, err
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("CHAOS_SEED"); s != "" {
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			return 0, fmt.Errorf("CHAOS_SEED: %w", err)
		}
	}
	c := &chaos{log: log, seed: seed, quick: os.Getenv("CHAOS_QUICK") == "1",
		rng: rand.New(rand.NewPCG(seed, seed>>1|1)), runDir: filepath.Join(root, ".run/chaos"),
		stackScript: filepath.Join(root, "dev/chaos/stack.sh"),
		brokers:     strings.Split(os.Getenv("SLUICE_KAFKA_BROKERS"), ","),
		report:      newReport(seed),
		groups:      []string{"chaos.credits", "chaos.subscriptions", "chaos.installations", "chaos.verifications", "chaos.feedback", destinationsGroup}}
	c.report.Mode = pick(c.quick, "quick", "full")
	if os.Getenv("CHAOS_UPGRADE") == "1" {
		// One broker, as the quick run; the stages two of each.
		c.quick, c.report.Mode = true, "upgrade"
		if c.upgrade, err = newUpgrade(root, c); err != nil {
			return 0, err
		}
	}
	fmt.Printf("chaos: seed %d (replay with CHAOS_SEED=%d), %s mode\n", seed, seed, c.report.Mode)
	began := time.Now()
	c.windows = []*window{{cause: causeStartUp, from: began}}
	defer c.close()
	if err := c.setup(ctx, os.Getenv("SLUICE_DATABASE_URL")); err != nil {
		return 0, err
	}
	defer c.fleet.stopAll()
	if c.proxy != nil {
		defer c.proxy.close()
	}
	if err := c.exercise(ctx); err != nil {
		return 0, err
	}
	if err := c.drain(ctx); err != nil {
		c.violate("drain: %v", err)
	}
	c.report.fill(c.sender)
	c.report.fillUpgrade(c.upgrade, c.sender)
	if err := c.check(ctx); err != nil {
		return 0, err
	}
	if err := c.checkDestinations(ctx); err != nil {
		return 0, err
	}
	if err := c.checkRebalances(ctx); err != nil {
		return 0, err
	}
	c.fleet.stopAll()
	c.report.DurationS = time.Since(began).Seconds()
	if err := c.report.write(filepath.Join(c.runDir, "report.json")); err != nil {
		return 0, err
	}
	c.report.print(os.Stdout)
	if len(c.report.Violations) > 0 {
		return 1, nil
	}
	return 0, nil
}

func pick[T any](quick bool, q, full T) T {
	if quick {
		return q
	}
	return full
}

func (c *chaos) close() {
	if c.pool != nil {
		c.pool.Close()
	}
	if c.adm != nil {
		c.adm.Close()
	}
	if c.groupLog != nil {
		c.groupLog.close()
	}
	if c.reader != nil {
		c.reader.close()
	}
	if c.receiver != nil {
		c.receiver.close()
	}
	if c.targets != nil {
		c.targets.close()
	}
	if c.balancer != nil {
		c.balancer.close()
	}
}

func (c *chaos) setup(ctx context.Context, adminURL string) error {
	if adminURL == "" || len(c.brokers) == 0 || c.brokers[0] == "" {
		return fmt.Errorf("SLUICE_DATABASE_URL and SLUICE_KAFKA_BROKERS must name the chaos stack (dev/chaos.sh sets them)")
	}
	var migrate func(context.Context, string) error
	if c.upgrade != nil {
		migrate = c.upgrade.migratePrevious // the previous release made this deployment
	}
	dbURL, pool, err := freshDatabase(ctx, adminURL, "sluice_chaos", migrate)
	if err != nil {
		return err
	}
	c.pool = pool
	secretKey, err := keyring.Generate()
	if err != nil {
		return fmt.Errorf("key ring: %w", err)
	}
	sz := pick(c.quick,
		sizes{tenants: 3, invoices: 60, subscriptions: 10, installations: 6, verifications: 10, feedback: 8, hmac: 6, poison: 2},
		sizes{tenants: 6, invoices: 200, subscriptions: 30, installations: 15, verifications: 30, feedback: 20, hmac: 15, poison: 3})
	if c.upgrade != nil {
		sz = sizes{tenants: 4, invoices: 80, subscriptions: 15, installations: 8, verifications: 15, feedback: 10, hmac: 8, poison: 2}
	}
	if c.tenants, err = createTenants(ctx, pool, secretKey, sz.tenants, 20, c.seed); err != nil {
		return err
	}
	if c.receiver, err = newReceiver(); err != nil {
		return err
	}
	if err := createEndpoints(ctx, pool, secretKey, c.tenants, c.receiver); err != nil {
		return err
	}
	c.report.Destinations.Endpoints = len(c.receiver.endpoints)
	logDir := filepath.Join(c.runDir, "logs")
	_ = os.RemoveAll(logDir)
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return err
	}
	c.fleet = newFleet(filepath.Join(c.runDir, "../../bin/sluice"), logDir, []string{
		"SLUICE_DATABASE_URL=" + dbURL,
		"SLUICE_KAFKA_BROKERS=" + strings.Join(c.brokers, ","),
		"SLUICE_SECRET_KEY=" + secretKey,
		"SLUICE_TOPIC_PREFIX=chaos",
		"SLUICE_SLOT=chaos",
		"SLUICE_TOPIC_PARTITIONS=6",
		"SLUICE_TOPIC_REPLICATION=" + pick(c.quick, "1", "3"),
		"SLUICE_MIGRATE=false",
		"SLUICE_LOG_LEVEL=info",
		// Each instance's admin listener (metrics, pprof) on a port of its
		// own, so instances never clash over the default one.
		"SLUICE_ADMIN_ADDR=127.0.0.1:0",
		// The deliverer (in every consumer) sends to the receiver, on
		// loopback over plain HTTP, and retries soon.
		"SLUICE_DELIVERY_ALLOW_HTTP=true",
		"SLUICE_DELIVERY_ALLOW_NETWORKS=127.0.0.0/8",
		"SLUICE_DELIVERY_BACKOFF=250ms",
		// The receiver answers within 500 ms; a shorter timeout is a
		// shorter lease left by a killed deliverer (5 x 2 s + 30 s).
		"SLUICE_DELIVERY_TIMEOUT=2s",
	})
	base := 18480
	if p, err := strconv.Atoi(os.Getenv("CHAOS_HTTP_PORT")); err == nil {
		base = p
	}
	addr := func(i int) string { return fmt.Sprintf("127.0.0.1:%d", base+i) }
	insts := c.instances()
	var urls []string
	for i, s := range insts {
		switch s.stage {
		case "ingest":
			c.ingests = append(c.ingests, s.name)
			urls = append(urls, "http://"+addr(i))
		case "cdc":
			c.relays = append(c.relays, s.name)
		case "consume":
			c.consumers = append(c.consumers, s.name)
		}
	}
	c.ingestURLs = urls
	ingestURL := urls[0]
	if c.upgrade != nil {
		// Providers reach the ingest instances through a load balancer, as
		// in a deployment that replaces them one at a time.
		if c.balancer, err = newBalancer(urls, 200*time.Millisecond); err != nil {
			return err
		}
		urls, ingestURL = []string{c.balancer.url}, c.balancer.url
	}
	c.sender = newSender(urls, 8)
	if c.reader, err = newKafkaReader(c.brokers, "chaos"); err != nil {
		return err
	}
	go c.reader.run(ctx)
	if c.groupLog, err = newGroupLog(c.brokers); err != nil {
		return err
	}
	go c.groupLog.run(ctx)
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.brokers...))
	if err != nil {
		return err
	}
	c.adm = kadm.NewClient(cl)
	// Endpoints of other kinds for the first tenant; not in the upgrade
	// run, whose first release knows only HTTP.
	if c.upgrade == nil {
		if c.targets, err = newTargets(c.brokers); err != nil {
			return err
		}
		if err := c.targets.create(ctx, pool, secretKey, c.adm, int16(pick(c.quick, 1, 3)), c.tenants[0].id, c.receiver); err != nil {
			return err
		}
		c.report.Destinations.Endpoints = len(c.receiver.endpoints)
	}
	c.plan = newPlan(c.seed, c.tenants, sz, ingestURL)
	// Full: the consumers reach Postgres through a proxy that adds latency
	// or cuts their connections.
	var consumerEnv []string
	if !c.quick {
		u, err := url.Parse(dbURL)
		if err != nil {
			return err
		}
		if c.proxy, err = newProxy(u.Host); err != nil {
			return err
		}
		u.Host = c.proxy.addr()
		consumerEnv = []string{"SLUICE_DATABASE_URL=" + u.String()}
	}
	for i, s := range insts {
		spec := procSpec{stage: s.stage, addr: addr(i), env: s.env}
		if s.stage == "consume" {
			spec.env = append(spec.env, consumerEnv...)
		}
		if c.upgrade != nil {
			spec.bin = c.upgrade.previous
		}
		if err := c.fleet.start(ctx, s.name, spec, s.ready); err != nil {
			return err
		}
	}
	// A consumer is ready before its groups have joined: the first fault
	// waits until they have, so start-up's rebalances are counted as such.
	c.windows[0].allowed = c.allowance(c.windows[0])
	if err := c.settle(ctx, nil, false); err != nil {
		c.violate("start-up: %v", err)
	}
	c.log.Info("stack up", slog.Int("deliveries", len(c.plan.deliveries)), slog.Int("refunds", len(c.plan.refunds)))
	return nil
}

// inst is one instance of a stage the run starts.
type inst struct {
	name, stage, ready string
	env                []string
}

// instances are the run's processes. Quick: one instance of each stage
// (the relay's standby aside); full: two of each; upgrade: two of each,
// the consumers without the deliverer and a deliverer of its own (a
// consumer that delivers), so each kind is replaced in its turn.
func (c *chaos) instances() []inst {
	insts := []inst{{"ingest-a", "ingest", "/readyz", nil}, {"relay-a", "cdc", "/readyz", nil}, {"relay-b", "cdc", "/healthz", nil},
		{"consume-a", "consume", "/readyz", nil}}
	switch {
	case c.upgrade != nil:
		noDeliver := []string{"SLUICE_DELIVER=false"}
		insts[3].env = noDeliver
		insts = append(insts, inst{"ingest-b", "ingest", "/readyz", nil}, inst{"consume-b", "consume", "/readyz", noDeliver},
			inst{"deliver-a", "consume", "/readyz", nil})
	case !c.quick:
		insts = append(insts, inst{"ingest-b", "ingest", "/readyz", nil}, inst{"consume-b", "consume", "/readyz", nil})
	}
	return insts
}

// exercise sends the load while the faults happen, then the refunds (each
// after its invoice was accepted).
func (c *chaos) exercise(ctx context.Context) error {
	if c.upgrade != nil {
		return c.exerciseUpgrade(ctx)
	}
	faults := c.faultList(pick(c.quick, 1, 2))
	loadFor := pick(c.quick, 60*time.Second, 180*time.Second)
	rate := float64(len(c.plan.deliveries)) / loadFor.Seconds()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		c.runFaults(ctx, faults)
	}()
	c.sender.run(ctx, c.plan.deliveries, 8, rate)
	c.sender.run(ctx, c.plan.refunds, 8, 50)
	wg.Wait()
	return ctx.Err()
}

// drain restarts anything that died on its own (a violation: only the run
// kills), then waits until every outbox row is in Kafka and every group
// committed to the end.
func (c *chaos) drain(ctx context.Context) error {
	for _, name := range append(append(append([]string{}, c.ingests...), c.relays...), c.consumers...) {
		if !c.fleet.alive(name) {
			c.violate("%s exited without being killed; see %s/logs/%s.log", name, c.runDir, name)
			ready := "/readyz"
			if strings.HasPrefix(name, "relay") {
				ready = "/healthz"
			}
			if err := c.fleet.restart(ctx, name, ready); err != nil {
				return err
			}
		}
	}
	var missing []string
	err := poll(ctx, pick(c.quick, 60*time.Second, 120*time.Second), "every outbox row in Kafka", func() (bool, error) {
		ids, err := c.outboxIDs(ctx)
		if err != nil {
			return false, err
		}
		missing = c.reader.missing(ids)
		return len(missing) == 0, nil
	})
	if err != nil {
		c.report.Lost += len(missing)
		return fmt.Errorf("%d committed outbox rows never reached Kafka (first %v): %w", len(missing), missing[:min(5, len(missing))], err)
	}
	err = poll(ctx, pick(c.quick, 60*time.Second, 120*time.Second), "every group to commit to the end", func() (bool, error) {
		return groupsCaughtUp(ctx, c.adm, c.groups)
	})
	c.report.Republished = c.reader.republished()
	if err != nil {
		return err
	}
	// The last fault's rebalances are over before they are counted.
	return c.settle(ctx, nil, false)
}

func (c *chaos) outboxIDs(ctx context.Context) ([]string, error) {
	rows, err := c.pool.Query(ctx, `SELECT id::text FROM outbox`)
	if err != nil {
		return nil, fmt.Errorf("outbox: %w", err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// violate records an invariant that did not hold.
func (c *chaos) violate(format string, args ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v := fmt.Sprintf(format, args...)
	c.report.Violations = append(c.report.Violations, v)
	c.log.Error("VIOLATION", slog.String("what", v))
}
