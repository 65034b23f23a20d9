// Package delivery sends the deliveries the fan-out (consumers/destinations)
// wrote to tenants' endpoints: one loop per enabled endpoint claims its due
// deliveries from Postgres and sends them, so an endpoint's backlog, retries
// and slowness are its own and never hold a Kafka partition or another
// endpoint's requests.
//
// Order: an ordered endpoint is sent a delivery only when no earlier one of
// its resource key is pending (delivered or given up frees the next), so its
// first successful receipt of each event follows Kafka's order per key. A
// head that keeps failing holds its key's later events until it is delivered
// or dead (the retry horizon), and nothing else. Unordered endpoints take
// every due delivery, in parallel.
//
// At least once, one webhook-id: a claim is a lease on the row (next_at in
// the future), counted as an attempt; a deliverer killed mid-request leaves a
// lease that runs out and the delivery is sent again with the same
// webhook-id. The outcome is written, with the next of its key woken, in one
// transaction.
//
// Retries back off exponentially with jitter (a Retry-After is the least
// wait) until the retry horizon, then the delivery is dead for that
// endpoint, every failed attempt kept. A 410 disables the endpoint; an
// endpoint whose attempts all failed for the failing horizon is disabled
// too, audited and counted. A circuit breaker per endpoint stops claiming
// after consecutive failures, then lets one probe through. Rates and
// concurrency are per endpoint and per deliverer process.
package delivery

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluicehq/sluice/internal/store/endpoints"
)

var (
	//go:embed sql/candidates.sql
	candidatesSQL string
	//go:embed sql/lease.sql
	leaseSQL string
	//go:embed sql/park.sql
	parkSQL string
	//go:embed sql/promote.sql
	promoteSQL string
	//go:embed sql/delivered.sql
	deliveredSQL string
	//go:embed sql/failed.sql
	failedSQL string
	//go:embed sql/bodies.sql
	bodiesSQL string
	//go:embed sql/unpark.sql
	unparkSQL string
	//go:embed sql/release.sql
	releaseSQL string
	//go:embed sql/failing.sql
	failingSQL string
	//go:embed sql/recovered.sql
	recoveredSQL string
	//go:embed sql/disable.sql
	disableSQL string
	//go:embed sql/next_due.sql
	nextDueSQL string
)

// Config tunes the deliverer.
type Config struct {
	// Client sends the requests: internal/egress's, which dials only
	// public addresses, follows no redirect and ignores proxies from the
	// environment. Required.
	Client *http.Client
	// Horizon is how long a delivery is retried before it is dead for its
	// endpoint. Default 72h (as Stripe retries); never longer than the
	// payload horizon, which keeps the bodies it sends.
	Horizon time.Duration
	// FailingHorizon disables an endpoint whose every attempt failed for
	// this long. Default 120h.
	FailingHorizon time.Duration
	// Timeout bounds one request, answer included. Default 15s.
	Timeout time.Duration
	// BackoffBase is the wait after a first failure, each next one four
	// times longer up to BackoffMax, jittered. Defaults 5s and 6h.
	BackoffBase, BackoffMax time.Duration
	// DefaultConcurrency and DefaultRate apply to endpoints that set none;
	// MaxConcurrency and MaxRate cap every endpoint's. Rate 0 is
	// unlimited. Defaults 4, 0, 20, 100.
	DefaultConcurrency, MaxConcurrency int
	DefaultRate, MaxRate               int
	// Breaker opens after this many consecutive failures of an endpoint
	// (default 5), for Cooldown doubling to MaxCooldown (30s, 10m).
	BreakerFailures       int
	Cooldown, MaxCooldown time.Duration
	// Poll is how often an idle endpoint looks for work without being
	// woken (a missed notification, another process's retry). Default 5s.
	Poll time.Duration
	// Refresh is how often the endpoints are read again. Default 5s.
	Refresh time.Duration
	// Registerer receives the deliverer's metrics.
	Registerer prometheus.Registerer
}

// WithDefaults fills unset fields.
func (c Config) WithDefaults() Config {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&c.Horizon, 72*time.Hour)
	def(&c.FailingHorizon, 120*time.Hour)
	def(&c.Timeout, 15*time.Second)
	def(&c.BackoffBase, 5*time.Second)
	def(&c.BackoffMax, 6*time.Hour)
	def(&c.Cooldown, 30*time.Second)
	def(&c.MaxCooldown, 10*time.Minute)
	def(&c.Poll, 5*time.Second)
	def(&c.Refresh, 5*time.Second)
	if c.DefaultConcurrency <= 0 {
		c.DefaultConcurrency = 4
	}
	if c.MaxConcurrency <= 0 {
		c.MaxConcurrency = 20
	}
	if c.MaxRate <= 0 {
		c.MaxRate = 100
	}
	if c.BreakerFailures <= 0 {
		c.BreakerFailures = 5
	}
	return c
}

// Validate refuses a configuration that cannot deliver.
func (c Config) Validate() error {
	if c.Client == nil {
		return errors.New("delivery: no HTTP client")
	}
	return nil
}

// Deliverer runs one loop per enabled endpoint.
type Deliverer struct {
	cfg   Config
	pool  *pgxpool.Pool
	store endpoints.Store
	log   *slog.Logger
	m     *metrics

	mu    sync.Mutex
	loops map[string]*loop
}

// New builds a deliverer over pool; store reads the endpoints.
func New(cfg Config, log *slog.Logger, pool *pgxpool.Pool, store endpoints.Store) *Deliverer {
	cfg = cfg.WithDefaults()
	return &Deliverer{cfg: cfg, pool: pool, store: store, log: log, m: newMetrics(cfg.Registerer), loops: map[string]*loop{}}
}

// Run delivers until ctx ends, then waits for the requests in flight.
func (d *Deliverer) Run(ctx context.Context) error {
	if err := d.cfg.Validate(); err != nil {
		return err
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	wg.Add(1)
	go func() { defer wg.Done(); d.listen(ctx) }()
	t := time.NewTicker(d.cfg.Refresh)
	defer t.Stop()
	for {
		if err := d.sync(ctx, &wg); err != nil && ctx.Err() == nil {
			d.log.Warn("read endpoints", slog.String("event", "delivery.endpoints_failed"), slog.Any("error", err))
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// sync starts a loop for every enabled endpoint, restarts one whose target
// changed, and stops those no longer enabled.
func (d *Deliverer) sync(ctx context.Context, wg *sync.WaitGroup) error {
	targets, err := d.store.Targets(ctx)
	if err != nil && targets == nil {
		return err
	}
	if err != nil {
		// The others are delivered; those are named every refresh.
		d.log.Warn("endpoints left out", slog.String("event", "delivery.endpoints_unopened"), slog.Any("error", err))
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	seen := make(map[string]bool, len(targets))
	for _, t := range targets {
		seen[t.ID] = true
		l := d.loops[t.ID]
		if l != nil && l.sameShape(t) {
			l.update(t)
			continue
		}
		if l != nil {
			l.stop()
		}
		l = d.newLoop(ctx, t)
		d.loops[t.ID] = l
		wg.Add(1)
		go func() { defer wg.Done(); l.run() }()
	}
	for id, l := range d.loops {
		if !seen[id] {
			l.stop()
			delete(d.loops, id)
		}
	}
	return nil
}

// wake tells the loop of endpoint id there is work; "" wakes every loop
// (a notification may have been missed).
func (d *Deliverer) wake(id string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if id != "" {
		if l := d.loops[id]; l != nil {
			l.poke()
		}
		return
	}
	for _, l := range d.loops {
		l.poke()
	}
}

// listen wakes loops on the fan-out's notifications; after a lost
// connection it wakes every loop, since notifications sent meanwhile are
// gone.
func (d *Deliverer) listen(ctx context.Context) {
	for ctx.Err() == nil {
		err := d.listenOnce(ctx)
		if ctx.Err() != nil {
			return
		}
		d.log.Warn("delivery notifications", slog.String("event", "delivery.listen_failed"), slog.Any("error", err))
		d.wake("")
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

func (d *Deliverer) listenOnce(ctx context.Context) error {
	conn, err := d.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "LISTEN sluice_deliveries"); err != nil {
		return err
	}
	defer func() { _, _ = conn.Exec(context.WithoutCancel(ctx), "UNLISTEN sluice_deliveries") }()
	d.wake("")
	for {
		n, err := conn.Conn().WaitForNotification(ctx)
		if err != nil {
			return fmt.Errorf("wait for notification: %w", err)
		}
		d.wake(n.Payload)
	}
}

// ErrNoEndpoint: the endpoint to test does not exist or is disabled.
var ErrNoEndpoint = errors.New("delivery: no enabled endpoint with that id")

// TestEndpoint posts a signed synthetic sluice.test event to endpoint id
// and returns the attempt; nothing is stored.
func (d *Deliverer) TestEndpoint(ctx context.Context, id string) (endpoints.Attempt, error) {
	t, ok, err := d.store.Target(ctx, id)
	if !ok {
		return endpoints.Attempt{}, errors.Join(ErrNoEndpoint, err)
	}
	now := time.Now().UTC()
	eventID := "test_" + strconv.FormatInt(now.UnixNano(), 36)
	body := fmt.Appendf(nil, `{"type":"sluice.test","endpoint_id":%q,"sent_at":%q}`, id, now.Format(time.RFC3339Nano))
	m := message{webhookID: "msg_" + eventID, attempt: 1, body: body, eventID: eventID, eventType: "sluice.test",
		src: "/tenants/" + t.TenantID + "/endpoints/" + id, eventTime: &now, contentType: "application/json", tenantID: t.TenantID}
	a, _ := d.send(ctx, &t, m)
	return a, nil
}
