// Package lifecycle keeps Sluice's stored events within their horizons:
// event keys (the inbox row: dedup identity and content hashes) for
// KeyHorizon, payloads (bodies, and conflicts that hold bodies) for
// PayloadHorizon, object links for LinksHorizon. It creates the time
// partitions of the high-volume tables ahead of need and drops each one
// whole once everything in it is past its horizon; event keys, which must
// stay unique across time and so live in a plain table, are deleted in
// batches.
//
// The dispatcher's record of sends (dispatch_deliveries, its dedup of
// calls) is partitioned and kept for KeyHorizon. Dead letters and parked
// relay records are few and their unique keys are a dedup, so they stay
// plain tables: once an operator resolved one (replayed; released) and
// PayloadHorizon has passed since, it is deleted in batches; an unresolved
// one never is.
//
// Reconciliation's record of its runs (reconcile_runs, each with its
// corrections) is kept for KeyHorizon, as long as the event keys its
// corrections name, and deleted in batches; but each source's newest good
// run (ended without error, not a dry run) stays however old. Its end is
// the source's watermark as the runs record it (reconciliation resumed
// from it until reconcile_positions took over in migration 00025, which
// seeded each position from it): without that run the watermark would
// move back to an older run's end or, with no good run left, vanish, and
// a source whose runs failed for longer than the horizon would look as if
// it had never been reconciled.
//
// The admin API's Idempotency-Keys are deleted in batches a day after they
// were claimed (IdempotencyHorizon).
//
// Deliveries to tenants' endpoints (deliveries, and their failed attempts)
// are deleted in batches past PayloadHorizon, whatever their state: a
// rewind of the fan-out cannot reach an event older than the topics'
// retention, so a delivered row kept that long is what keeps a rewind from
// sending anything again, and a pending one that old is past any retry.
//
// Object links (which invoice a payment paid: how a Stripe refund that
// names only its payment reaches its invoice) are one row per payment,
// deleted in batches past LinksHorizon. A refund that comes after its
// link is gone waits, as one whose link never came does, until a new link
// or reconciliation's lookup of the payment releases it; its waiting row
// goes in the transaction that publishes it, or with its key.
//
// Partitions running out (the manager stopped or keeps failing) are
// visible before writes fail: CheckAhead, CheckWritable and the gauge
// sluice_lifecycle_partition_coverage_seconds (coverage.go).
//
// It also erases on request (erase.go): one tenant's every row (offboarding),
// or the payloads that mention a subject, keeping their keys.
//
// Invariant: a row is removed only once it is older than its table's horizon
// (a partition goes when its upper bound is), and a key always outlives its
// payload (KeyHorizon >= PayloadHorizon) and any erasure but a tenant's, so
// a redelivery of anything whose payload ever existed is still judged
// against its key. Aging out never moves a source's reconciliation
// watermark, and an event that still waits goes only with its key. One
// manager works at a time across instances (a session advisory lock per
// pass); the others skip the pass.
package lifecycle

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluicehq/sluice/internal/refusal"
)

// Config sets the horizons and how partitions are cut.
type Config struct {
	// PayloadHorizon is how long bodies are kept: what a rewind, a resync,
	// a dead-letter replay or an operator can still read. Default 7 days;
	// never shorter than the topics' retention (claimed bodies are read from
	// here while Kafka can replay their records), which the caller checks.
	PayloadHorizon time.Duration
	// KeyHorizon is how long event keys are kept, so a redelivery is a
	// duplicate. Default 30 days: longer than providers' retry windows
	// (Stripe 3 days, GitHub's manual redelivery 3 days). A redelivery after
	// it is accepted as a new event (consumers' business keys still keep
	// its effect single).
	KeyHorizon time.Duration
	// LinksHorizon is how long object links are kept: which invoice a
	// payment paid, so that a Stripe charge.refunded of API version basil
	// on (it names its payment intent and charge, no invoice) reaches its
	// invoice. Default KeyHorizon. A refund that comes after its payment's
	// link is gone waits (inbox status waiting) until reconciliation looks
	// the payment up (Stripe's invoice payments) and enters the link again;
	// for a source without API credentials it waits until its key expires.
	// Longer resolves late refunds at once, for a row and an index entry
	// per payment. Shorter than KeyHorizon delays some: a payment that
	// reconciliation itself linked is entered again under the same id, a
	// duplicate that links nothing until that key expires.
	LinksHorizon time.Duration
	// IdempotencyHorizon is how long the admin API's Idempotency-Keys are
	// kept (admin_idempotency_keys, by when each was claimed): the API
	// answers a key older than its own lifetime as new, and this deletes
	// it. Default 24h, the API's lifetime.
	IdempotencyHorizon time.Duration
	// Interval is the time range of one partition. Default 24h. A row lives
	// at most one Interval past its horizon, so storage is the horizon plus
	// one Interval (plus Ahead empty partitions).
	Interval time.Duration
	// Ahead is how many partitions exist beyond the current one, so a
	// missed pass (or several) never leaves ingest without a partition.
	// Default 3.
	Ahead int
	// Every is the pause between passes. Default 5m (a tenth of Interval
	// when that is shorter).
	Every time.Duration
	// NoCleanup keeps everything: partitions are still created ahead, but
	// nothing is dropped or deleted (storage grows without bound). For
	// measuring what cleanup costs, and for deployments that archive and
	// prune by other means.
	NoCleanup bool
	// KeyBatch is how many expired keys (or resolved dead letters,
	// released parked records, reconciliation runs, object links,
	// deliveries) one DELETE removes; a run's corrections and a delivery's
	// attempts go with it, however many.
	// Default 5000.
	KeyBatch int
	// LockTimeout bounds how long a partition change waits for its table's
	// lock (ingest queues behind a waiting ALTER); the pass retries later.
	// Default 2s.
	LockTimeout time.Duration
	// Now is the clock; tests move it. Default time.Now.
	Now func() time.Time
}

// WithDefaults fills unset fields.
func (c Config) WithDefaults() Config {
	if c.PayloadHorizon <= 0 {
		c.PayloadHorizon = 7 * 24 * time.Hour
	}
	if c.KeyHorizon <= 0 {
		c.KeyHorizon = 30 * 24 * time.Hour
	}
	if c.LinksHorizon <= 0 {
		c.LinksHorizon = c.KeyHorizon
	}
	if c.IdempotencyHorizon <= 0 {
		c.IdempotencyHorizon = 24 * time.Hour
	}
	if c.Interval <= 0 {
		c.Interval = 24 * time.Hour
	}
	if c.Ahead <= 0 {
		c.Ahead = 3
	}
	if c.Every <= 0 {
		c.Every = min(5*time.Minute, c.Interval/10)
	}
	if c.KeyBatch <= 0 {
		c.KeyBatch = 5000
	}
	if c.LockTimeout <= 0 {
		c.LockTimeout = 2 * time.Second
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

// ErrKeysBeforePayloads: the key horizon is shorter than the payload
// horizon, which would let a redelivery of a kept payload be accepted anew.
var ErrKeysBeforePayloads = refusal.Sub(refusal.Invalid, "keys_before_payloads", "lifecycle: key horizon shorter than payload horizon")

// Validate refuses horizons that break the invariant, and a negative links
// horizon (zero is the key horizon).
func (c Config) Validate() error {
	if c.LinksHorizon < 0 {
		return fmt.Errorf("lifecycle: links horizon %s: want a positive duration, or 0 for the key horizon", c.LinksHorizon)
	}
	c = c.WithDefaults()
	if c.KeyHorizon < c.PayloadHorizon {
		return fmt.Errorf("%w (%s < %s)", ErrKeysBeforePayloads, c.KeyHorizon, c.PayloadHorizon)
	}
	return nil
}

// Manager runs passes.
type Manager struct {
	cfg     Config
	pool    *pgxpool.Pool
	log     *slog.Logger
	metrics *metrics
}

// New makes a manager; reg may be nil (commands that run one pass).
func New(cfg Config, pool *pgxpool.Pool, log *slog.Logger, reg prometheus.Registerer) *Manager {
	m := &Manager{cfg: cfg.WithDefaults(), pool: pool, log: log, metrics: newMetrics(reg)}
	if reg != nil {
		reg.MustRegister(newCoverageCollector(m))
	}
	return m
}

// Run makes a pass at once, then every cfg.Every, until ctx ends. A failed
// pass is logged and retried at the next tick: ingest has Ahead partitions
// of slack.
func (m *Manager) Run(ctx context.Context) error {
	t := time.NewTicker(m.cfg.Every)
	defer t.Stop()
	for {
		if _, err := m.Pass(ctx); err != nil && ctx.Err() == nil {
			m.metrics.failures.Inc()
			m.log.Warn("lifecycle pass failed", slog.Any("error", err))
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}
