// Package dispatch delivers second-hop intents (the e-mails and alerts other
// handlers write to the notifications topic) to an external HTTP service.
//
// Invariant: every intent is delivered until the service acknowledges it
// with a 2xx, always with the same Idempotency-Key header (the intent's
// ce_id, derived from the business key of the effect that caused it), and
// the delivery is recorded in dispatch_deliveries only after that 2xx. The HTTP
// call happens before the batch transaction opens (consumers.Handler.Prepare),
// never inside it.
//
// Uncertain outcome: when the service accepted a request but its answer was
// lost (timeout, connection reset), Sluice cannot know whether the send
// happened, so it treats the failure as transient and sends again with the
// same Idempotency-Key; the service is expected to deduplicate on that key
// (as Stripe's and most e-mail APIs do) and answer 2xx for a key it has
// already processed. Delivery to the service is therefore at least once;
// the effect (one e-mail) is exactly once only with the service's
// cooperation, and dispatch_deliveries says which sends were acknowledged
// (kept for the key horizon, internal/store/lifecycle).
//
// Retries: 5xx, 408, 429, timeouts and connection errors are transient
// (retried in place with the group's backoff; a Retry-After header is
// honoured as a lower bound); any other 4xx is permanent and the intent is
// dead-lettered after the group's attempts. A service that keeps failing
// opens a circuit breaker: no request goes until its cooldown ends, then one
// probe decides; meanwhile records wait in their partitions, in order.
//
// Authenticity: every request is signed with Standard Webhooks
// (webhook-id = the Idempotency-Key, webhook-timestamp, webhook-signature
// with the destination's whsec_ secret), so the service can refuse calls
// that are not Sluice's with any Standard Webhooks library.
package dispatch

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	metricnoop "go.opentelemetry.io/otel/metric/noop"

	"github.com/sluicehq/sluice/consumers"
	"github.com/sluicehq/sluice/internal/egress"
	"github.com/sluicehq/sluice/internal/standardwebhooks"
	"github.com/sluicehq/sluice/internal/telemetry"
)

var (
	//go:embed sql/sent.sql
	sentSQL string
	//go:embed sql/log.sql
	logSQL string
)

// Topic is the suffix of the topic the dispatcher consumes.
const Topic = "notifications"

// HeaderIdempotencyKey carries the intent's stable key to the service.
const HeaderIdempotencyKey = "Idempotency-Key"

// Config says where intents go.
type Config struct {
	// URL receives one POST per intent; empty turns the dispatcher off.
	URL string
	// Timeout bounds one request. Default 10s.
	Timeout time.Duration
	// Client makes the requests. Default a client with Timeout.
	Client *http.Client
	// Secret signs every request (Standard Webhooks, "whsec_" + base64 of
	// the key); required with URL.
	Secret string
	// Breaker tunes the circuit breaker in front of the service.
	Breaker BreakerConfig
	// Registerer, when set, receives the dispatcher's metrics: the
	// service's answers and latency, the breaker's state.
	Registerer prometheus.Registerer
	// Tracing, when enabled, gives each request a client span (otelhttp)
	// under the intent's process span, and sends that span's traceparent.
	// Off, the request carries the intent's traceparent as it came.
	Tracing telemetry.Tracing
}

// Validate refuses a configuration that could not send a signed request.
func (c Config) Validate() error {
	if c.URL == "" {
		return nil
	}
	if _, err := standardwebhooks.Key(c.Secret); err != nil {
		return fmt.Errorf("dispatch: SLUICE_DISPATCH_SECRET: %w", err)
	}
	return nil
}

// WithDefaults fills unset fields.
func (c Config) WithDefaults() Config {
	if c.Timeout <= 0 {
		c.Timeout = 10 * time.Second
	}
	if c.Client == nil {
		c.Client = &http.Client{Timeout: c.Timeout}
	}
	if t := c.Tracing; t.Enabled() {
		traced := *c.Client
		traced.Transport = otelhttp.NewTransport(traced.Transport,
			otelhttp.WithTracerProvider(t.Provider),
			otelhttp.WithPropagators(t.Propagation()),
			otelhttp.WithMeterProvider(metricnoop.NewMeterProvider()), // counted in sluice_dispatch_*
			otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string { return "dispatch " + r.Method }))
		c.Client = &traced
	}
	return c
}

// Handler delivers intents: the call in Prepare, the record in the batch.
type Handler struct {
	cfg     Config
	pool    *pgxpool.Pool
	group   string
	key     []byte // the signing key, decoded from cfg.Secret
	breaker *breaker
}

// New builds the dispatcher of consumer group group; pool is read outside
// transactions to skip intents already delivered. cfg must have passed
// Validate.
func New(cfg Config, pool *pgxpool.Pool, group string) *Handler {
	cfg = cfg.WithDefaults()
	key, _ := standardwebhooks.Key(cfg.Secret)
	m := newMetrics(cfg.Registerer, group)
	cfg.Client = m.instrument(cfg.Client)
	return &Handler{cfg: cfg, pool: pool, group: group, key: key, breaker: newBreaker(cfg.Breaker, m.breakerState)}
}

// errBreakerOpen: the breaker holds requests back; transient by nature.
var errBreakerOpen = errors.New("dispatch: circuit breaker open, the service kept failing")

// delivery is what Prepare learned: the service's 2xx, or that an earlier
// run already had one.
type delivery struct {
	status  int
	already bool
}

// Prepare implements consumers.Handler: it calls the service unless the
// intent was already delivered.
func (h *Handler) Prepare(ctx context.Context, rec *consumers.Record) error {
	key := rec.Event.ID
	if key == "" || rec.Value == nil {
		return consumers.Permanentf("intent without idempotency key or body")
	}
	var sent bool
	if err := h.pool.QueryRow(ctx, sentSQL, key).Scan(&sent); err != nil {
		return fmt.Errorf("dispatch log: %w", err)
	}
	if sent {
		rec.Prepared = delivery{already: true}
		return nil
	}
	if wait, ok := h.breaker.allow(time.Now()); !ok {
		return consumers.RetryAfter(errBreakerOpen, wait)
	}
	status, err := h.send(ctx, rec)
	// Any answer but a transient failure shows the service is up.
	h.breaker.record(err == nil || consumers.IsPermanent(err), time.Now())
	if err != nil {
		return err
	}
	rec.Prepared = delivery{status: status}
	return nil
}

func (h *Handler) send(ctx context.Context, rec *consumers.Record) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.cfg.URL, bytes.NewReader(rec.Value))
	if err != nil {
		return 0, consumers.Permanentf("dispatch request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(HeaderIdempotencyKey, rec.Event.ID)
	now := time.Now()
	req.Header.Set(standardwebhooks.IDHeader, rec.Event.ID)
	req.Header.Set(standardwebhooks.TimestampHeader, strconv.FormatInt(now.Unix(), 10))
	req.Header.Set(standardwebhooks.SignatureHeader, standardwebhooks.Signature(h.key, rec.Event.ID, now, rec.Value))
	req.Header.Set("Ce-Type", rec.Event.Type)
	if rec.Event.TraceParent != "" {
		// Tracing on, the transport replaces it with its span's.
		req.Header.Set("traceparent", rec.Event.TraceParent)
	}
	resp, err := h.cfg.Client.Do(req)
	if err != nil {
		// Uncertain outcome: the service may have accepted. Transient, so the
		// same key is sent again.
		return 0, fmt.Errorf("dispatch %s: %w", rec.Event.Type, err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		return resp.StatusCode, nil
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500 || resp.StatusCode == http.StatusRequestTimeout:
		err := fmt.Errorf("dispatch %s: service answered %d", rec.Event.Type, resp.StatusCode)
		if d, ok := egress.RetryAfter(resp.Header.Get("Retry-After"), time.Now()); ok {
			return 0, consumers.RetryAfter(err, d)
		}
		return 0, err
	default:
		return 0, consumers.Permanentf("dispatch %s: service refused with %d", rec.Event.Type, resp.StatusCode)
	}
}

// Begin implements consumers.Handler.
func (h *Handler) Begin(tx pgx.Tx) consumers.Batch { return consumers.EachRecord(tx, h.record) }

// record records the acknowledged delivery Prepare left in rec.
func (h *Handler) record(ctx context.Context, tx pgx.Tx, rec consumers.Record) error {
	d, ok := rec.Prepared.(delivery)
	if !ok {
		return errors.New("dispatch: record reached Apply unprepared")
	}
	if d.already {
		return nil
	}
	_, err := tx.Exec(ctx, logSQL, rec.Event.ID, h.group, rec.Topic, rec.Partition, rec.Offset, d.status)
	if err != nil {
		return fmt.Errorf("dispatch log: %w", err)
	}
	return nil
}

var _ consumers.Handler = (*Handler)(nil)
