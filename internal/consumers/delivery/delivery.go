// Package delivery sends the deliveries the fan-out (consumers/destinations)
// wrote to tenants' endpoints. One process owns an endpoint at a time (a
// session advisory lock: own.go) and keeps its pending deliveries in memory
// (queue.go), read from Postgres when it takes the endpoint and then as the
// fan-out announces them, so an endpoint's backlog, retries and slowness
// are its own and never hold a Kafka partition or another endpoint's
// requests. Endpoints are shared out among the processes delivering.
//
// Order: an ordered endpoint is sent a delivery only when every earlier one
// of its resource key was delivered or given up, so its first successful
// receipt of each event follows Kafka's order per key. A head that keeps
// failing holds its key's later events until it is delivered or dead (the
// retry horizon), and nothing else. Unordered endpoints take every due
// delivery, in parallel.
//
// At least once, one webhook-id: a delivery stays pending in Postgres
// until its 2xx is written (in batches, writer.go) or it is dead; an owner
// killed mid-request leaves it pending, and the next owner sends it again
// with the same webhook-id. The success path is two writes per delivery:
// the fan-out's insert and the batched outcome.
//
// Retries back off exponentially with jitter (a Retry-After is the least
// wait) until the retry horizon, then the delivery is dead for that
// endpoint, every failed attempt kept. A 410 disables the endpoint; an
// endpoint whose attempts all failed for the failing horizon is disabled
// too, audited and counted. A circuit breaker per endpoint stops sending
// after consecutive failures, then lets one probe through. Rates and
// concurrency are per endpoint, for the whole deployment (one owner).
package delivery

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"go.opentelemetry.io/otel/trace"

	"github.com/sluicehq/sluice/internal/refusal"
	"github.com/sluicehq/sluice/internal/store/endpoints"
	"github.com/sluicehq/sluice/internal/telemetry"
)

var (
	//go:embed sql/pending.sql
	pendingSQL string
	//go:embed sql/key_next.sql
	keyNextSQL string
	//go:embed sql/held.sql
	heldSQL string
	//go:embed sql/redo.sql
	redoSQL string
	//go:embed sql/mark_read.sql
	markReadSQL string
	//go:embed sql/mark.sql
	markSQL string
	//go:embed sql/minutes_prune.sql
	minutesPruneSQL string
	//go:embed sql/queue_rows.sql
	queueRowsSQL string
	//go:embed sql/queue_hand_over.sql
	queueHandOverSQL string
	//go:embed sql/snapshot_ended.sql
	snapshotEndedSQL string
	//go:embed sql/queue_backfill.sql
	queueBackfillSQL string
	//go:embed sql/delivered.sql
	deliveredSQL string
	//go:embed sql/failed.sql
	failedSQL string
	//go:embed sql/bodies.sql
	bodiesSQL string
	//go:embed sql/failing.sql
	failingSQL string
	//go:embed sql/recovered.sql
	recoveredSQL string
	//go:embed sql/disable.sql
	disableSQL string
)

// Config tunes the deliverer.
type Config struct {
	// Client sends the requests: internal/egress's, which dials only
	// public addresses, follows no redirect and ignores proxies from the
	// environment. Required.
	Client *http.Client
	// Dial opens the connections of targets that are not HTTP (RabbitMQ
	// servers, tenants' Kafka brokers, each broker a cluster names):
	// internal/egress's Dialer, under the same policy as Client. Nil: such
	// targets' attempts fail, refused.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// Horizon is how long a delivery is retried before it is dead for its
	// endpoint. Default 72h (as Stripe retries); never longer than the
	// payload horizon, which keeps the bodies it sends.
	Horizon time.Duration
	// FailingHorizon disables an endpoint whose every attempt failed for
	// this long. Default 120h.
	FailingHorizon time.Duration
	// FailingNotice tells an endpoint's tenant (an operational event,
	// sluice.endpoint.failing) once its every attempt failed for this
	// long, once per failure streak. Default 1h.
	FailingNotice time.Duration
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
	// (default 5), for Cooldown doubling to MaxCooldown (30s, 10m), each
	// at most BackoffMax: no endpoint waits longer than a delivery would.
	BreakerFailures       int
	Cooldown, MaxCooldown time.Duration
	// Poll is how often an idle endpoint reads its pending deliveries
	// without being told of new ones (a notification missed); a busy one
	// reads them all again every 12 polls. Default 5s.
	Poll time.Duration
	// Refresh is how often the endpoints are read again, and shared out
	// again among the deliverers. Default 5s.
	Refresh time.Duration
	// Registerer receives the deliverer's metrics.
	Registerer prometheus.Registerer
	// Tracing makes a client span of each attempt, a child of the event's
	// trace; the request's traceparent then names the attempt.
	Tracing telemetry.Tracing
	// Deployment is the deployment's own endpoint, if it has one.
	Deployment *Deployment
	// Name is the deployment's (its topic prefix): the endpoints are shared
	// out among the deliverers of one name.
	Name string
	// Signals, set by tests only, report the deliverer's steps.
	Signals *TestSignals
}

// Deployment is the deployment's own endpoint (--dispatch-url): the
// operator's service for the built-in effects' intents, delivered like a
// tenant's endpoint, ordered, with an Idempotency-Key header equal to the
// webhook-id. The operator's own, so the tenants' address rules do not
// apply: its requests go through Client, not Config.Client, and it is never
// disabled for failing (its deliveries wait until it answers).
type Deployment struct {
	// EndpointID is its row's (endpoints.DeploymentEndpointID).
	EndpointID string
	URL        string
	// Key signs every request (the --dispatch-secret's key).
	Key []byte
	// Client sends its requests.
	Client *http.Client
}

// target is the deployment's endpoint as the deliverer sends to it.
func (dep *Deployment) target() endpoints.Target {
	return endpoints.Target{ID: dep.EndpointID, URL: dep.URL, Ordered: true, Keys: [][]byte{dep.Key}}
}

// deployment says whether t is the deployment's own endpoint.
func (d *Deliverer) deployment(t *endpoints.Target) bool {
	return d.cfg.Deployment != nil && t.ID == d.cfg.Deployment.EndpointID
}

// IdempotencyKeyHeader carries the webhook-id to the deployment's endpoint,
// as the dispatcher always sent it.
const IdempotencyKeyHeader = "Idempotency-Key"

// WithDefaults fills unset fields.
func (c Config) WithDefaults() Config {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&c.Horizon, 72*time.Hour)
	def(&c.FailingHorizon, 120*time.Hour)
	def(&c.FailingNotice, time.Hour)
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
	c.MaxCooldown = min(c.MaxCooldown, c.BackoffMax)
	c.Cooldown = min(c.Cooldown, c.MaxCooldown)
	return c
}

// Validate refuses a configuration that cannot deliver.
func (c Config) Validate() error {
	if c.Client == nil {
		return errors.New("delivery: no HTTP client")
	}
	return nil
}

// Deliverer runs one loop per enabled endpoint it owns.
type Deliverer struct {
	cfg    Config
	pool   *pgxpool.Pool
	store  endpoints.Store
	log    *slog.Logger
	m      *metrics
	writer *writer
	tracer trace.Tracer // nil: tracing off

	own *owner // nil until connected, and after its connection failed
	qr  queueRows
	// ownPIDs are the sessions of every owner connection it had.
	ownPIDs []int32
	mu      sync.Mutex
	loops   map[string]*loop
	// transforms are the endpoints' transformations, compiled.
	transforms transforms
}

// New builds a deliverer over pool; store reads the endpoints.
func New(cfg Config, log *slog.Logger, pool *pgxpool.Pool, store endpoints.Store) *Deliverer {
	cfg = cfg.WithDefaults()
	d := &Deliverer{cfg: cfg, pool: pool, store: store, log: log, m: newMetrics(cfg.Registerer), loops: map[string]*loop{},
		tracer: cfg.Tracing.Tracer("github.com/sluicehq/sluice/internal/consumers/delivery")}
	d.writer = newWriter(d)
	return d
}

// handOverWait bounds the hand-over of a deliverer that stops last.
const handOverWait = 10 * time.Second

// Run delivers until ctx ends, then waits for the requests in flight and
// writes their outcomes; the last deliverer of this release to stop hands
// the pending deliveries over (handOver).
func (d *Deliverer) Run(ctx context.Context) error {
	if err := d.cfg.Validate(); err != nil {
		return err
	}
	written := make(chan struct{})
	go func() { defer close(written); d.writer.run() }()
	var last bool // no other deliverer of this release runs as this one stops
	defer func() {
		<-written
		if !last {
			return
		}
		// Every outcome written and every lock let go: what is pending
		// is ready for whichever deliverer comes next.
		hctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), handOverWait)
		defer cancel()
		if err := d.handOver(hctx); err != nil {
			d.log.Warn("hand the pending deliveries over", slog.String("event", "delivery.hand_over_failed"), slog.Any("error", err))
		}
	}()
	defer close(d.writer.in)
	defer d.disown()
	// Asked on the owner's connection while it holds its locks: once it is
	// closed, its session may still hold them for a moment.
	defer func() { last = d.lastOfRelease(context.WithoutCancel(ctx)) }()
	var wg sync.WaitGroup
	defer wg.Wait()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	wg.Add(1)
	go func() { defer wg.Done(); d.listen(ctx) }()
	t := time.NewTicker(d.cfg.Refresh)
	defer t.Stop()
	for {
		if err := d.sync(ctx); err != nil && ctx.Err() == nil {
			d.log.Warn("share endpoints", slog.String("event", "delivery.endpoints_failed"), slog.Any("error", err))
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// sync keeps a loop for each enabled endpoint this process owns, up to
// its share of them: it stops those no longer enabled or past the share,
// restarts one whose target changed shape, and takes free ones. It asks its
// owner's connection first: a process that lost it lost its locks, and its
// loops stop before anything else.
func (d *Deliverer) sync(ctx context.Context) error {
	if d.own == nil {
		var err error
		if d.own, err = newOwner(ctx, d.pool, d.cfg.Name); err != nil {
			return err
		}
		d.ownPIDs = append(d.ownPIDs, int32(d.own.pid))
	}
	n, old, err := d.own.deliverers(ctx)
	if err != nil {
		d.disown()
		return err
	}
	targets, err := d.store.Targets(ctx)
	if err != nil && targets == nil {
		return err
	}
	if err != nil {
		// The others are delivered; those are named every refresh.
		d.log.Warn("endpoints left out", slog.String("event", "delivery.endpoints_unopened"), slog.Any("error", err))
	}
	if d.cfg.Deployment != nil {
		// First, so a process that has it takes it within its share
		// (takeMore keeps the order of what is free).
		targets = append([]endpoints.Target{d.cfg.Deployment.target()}, targets...)
	}
	share := (len(targets) + n - 1) / n
	byID := make(map[string]endpoints.Target, len(targets))
	for _, t := range targets {
		byID[t.ID] = t
	}
	if err := d.keep(ctx, byID, share); err != nil {
		d.disown()
		return err
	}
	if err := d.takeMore(ctx, targets, byID, share); err != nil {
		return err
	}
	d.measureBacklog()
	return d.tendQueueRows(ctx, old)
}

// measureBacklog sets the age of the oldest delivery waiting at an
// endpoint this process owns, from what the loops hold (the oldest of an
// endpoint is held: what is read later is younger).
func (d *Deliverer) measureBacklog() {
	d.mu.Lock()
	var oldest int64
	for _, l := range d.loops {
		if at := l.oldest.Load(); at != 0 && (oldest == 0 || at < oldest) {
			oldest = at
		}
	}
	d.mu.Unlock()
	var age float64
	if oldest != 0 {
		age = max(time.Since(time.Unix(0, oldest)).Seconds(), 0)
	}
	d.m.backlog.Set(age)
}

// keep updates the loops of owned endpoints still enabled, restarting one
// whose target changed shape, and stops the rest and those past share.
func (d *Deliverer) keep(ctx context.Context, targets map[string]endpoints.Target, share int) error {
	d.mu.Lock()
	var gone, reshaped []string
	kept := 0
	for id, l := range d.loops {
		t, ok := targets[id]
		switch {
		case !ok || kept >= share:
			gone = append(gone, id)
			continue
		case l.sameShape(t):
			l.update(t)
		default:
			reshaped = append(reshaped, id)
		}
		kept++
	}
	d.mu.Unlock()
	// Stopped outside the lock: a loop's requests finishing take it.
	for _, id := range reshaped {
		d.stopLoop(id)
		d.mu.Lock()
		d.loops[id] = d.start(ctx, targets[id])
		d.mu.Unlock()
	}
	for _, id := range gone {
		d.stopLoop(id)
		if err := d.own.release(ctx, id); err != nil {
			return err
		}
	}
	return nil
}

func (d *Deliverer) stopLoop(id string) {
	d.mu.Lock()
	l := d.loops[id]
	delete(d.loops, id)
	d.mu.Unlock()
	if l != nil {
		l.stop()
	}
}

// takeMore locks free endpoints, in random order so processes starting
// together do not all reach for the same ones, up to share.
func (d *Deliverer) takeMore(ctx context.Context, targets []endpoints.Target, byID map[string]endpoints.Target, share int) error {
	d.mu.Lock()
	room := share - len(d.loops)
	var free []string
	for _, t := range targets {
		if d.loops[t.ID] == nil {
			free = append(free, t.ID)
		}
	}
	d.mu.Unlock()
	first := 0
	if d.cfg.Deployment != nil && len(free) > 0 && free[0] == d.cfg.Deployment.EndpointID {
		first = 1
	}
	rand.Shuffle(len(free)-first, func(i, j int) { free[first+i], free[first+j] = free[first+j], free[first+i] })
	got, err := d.own.take(ctx, free, room)
	if err != nil {
		d.disown()
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, id := range got {
		d.loops[id] = d.start(ctx, byID[id])
	}
	return nil
}

func (d *Deliverer) start(ctx context.Context, t endpoints.Target) *loop {
	l := d.newLoop(ctx, t)
	go l.run()
	return l
}

// disown stops every loop and drops the owner's connection, and with it
// the locks: after a failure of that connection another process may have
// taken the endpoints already.
func (d *Deliverer) disown() {
	d.mu.Lock()
	loops := d.loops
	d.loops = map[string]*loop{}
	d.mu.Unlock()
	for _, l := range loops {
		l.stop()
	}
	if d.own != nil {
		d.own.close()
		d.own = nil
	}
}

// announce tells endpoint's loop, if this process owns it, that ids in s
// are pending; an empty endpoint tells every loop to read everything again
// (notifications may have been missed).
func (d *Deliverer) announce(endpoint string, s span, whole bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if endpoint == "" {
		for _, l := range d.loops {
			l.rescan()
		}
		return
	}
	if l := d.loops[endpoint]; l != nil {
		if whole {
			l.rescan()
		} else {
			l.note(s)
		}
	}
}

// listen passes the fan-out's notifications to the loops; after a lost
// connection every loop reads everything again, since notifications sent
// meanwhile are gone.
func (d *Deliverer) listen(ctx context.Context) {
	for ctx.Err() == nil {
		err := d.listenOnce(ctx)
		if ctx.Err() != nil {
			return
		}
		d.log.Warn("delivery notifications", slog.String("event", "delivery.listen_failed"), slog.Any("error", err))
		d.announce("", span{}, true)
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
	d.announce("", span{}, true)
	for {
		n, err := conn.Conn().WaitForNotification(ctx)
		if err != nil {
			return fmt.Errorf("wait for notification: %w", err)
		}
		endpoint, s, ok := parseNote(n.Payload)
		d.announce(endpoint, s, !ok)
	}
}

// parseNote reads "<endpoint> <lowest id> <highest id>"; a payload of
// another shape names an endpoint to read again whole.
func parseNote(p string) (string, span, bool) {
	f := strings.Fields(p)
	if len(f) != 3 {
		return strings.TrimSpace(p), span{}, false
	}
	lo, err1 := strconv.ParseInt(f[1], 10, 64)
	hi, err2 := strconv.ParseInt(f[2], 10, 64)
	if err1 != nil || err2 != nil || lo > hi {
		return f[0], span{}, false
	}
	return f[0], span{lo, hi}, true
}

// TestEndpoint posts a signed test event to endpoint id, straight from
// here, and returns the attempt: ev's type and body, or with none the
// synthetic sluice.test. It is a delivery of its own, not one of the
// endpoint's: nothing is stored, it waits for no earlier delivery and
// holds none back, and its ids (test_..., msg_test_...) are no event's.
// An endpoint that is no target (disabled, deleted, no signing secret in
// force) is a conflict (refusal.Conflict) that says why when the store
// does.
func (d *Deliverer) TestEndpoint(ctx context.Context, id string, ev endpoints.TestEvent) (endpoints.Attempt, error) {
	t, ok, err := d.store.Target(ctx, id)
	if !ok {
		if err != nil && !errors.Is(err, endpoints.ErrNoSecret) {
			return endpoints.Attempt{}, err // a read that failed, or a secret that does not open: the server's
		}
		detail := fmt.Sprintf("endpoint %s is disabled or paused: nothing is sent to it", id)
		if err != nil {
			detail = err.Error()
		}
		return endpoints.Attempt{}, refusal.New(refusal.Conflict, "%s", detail)
	}
	now := time.Now().UTC()
	eventID := "test_" + strconv.FormatInt(now.UnixNano(), 36)
	if ev.Type == "" {
		ev.Type = endpoints.SyntheticTestType
		ev.Body = fmt.Appendf(nil, `{"type":"sluice.test","endpoint_id":%q,"sent_at":%q}`, id, now.Format(time.RFC3339Nano))
	}
	m := message{webhookID: "msg_" + eventID, attempt: 1, body: ev.Body, eventID: eventID, eventType: ev.Type,
		src: "/tenants/" + t.TenantID + "/endpoints/" + id, eventTime: &now, contentType: "application/json", tenantID: t.TenantID}
	// The synthetic event is of no type the endpoint takes: sent as it is,
	// never through the endpoint's transformation (which would fail over
	// it, and hide whether the endpoint is reachable).
	t.Transformation = ""
	s := d.newSender(t, 1)
	defer s.close()
	a, _ := d.send(ctx, s, &t, m)
	return a, nil
}
