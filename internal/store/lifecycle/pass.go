package lifecycle

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
)

// lockKey is the advisory lock one pass holds, so one manager works at a time.
const lockKey = "sluice.lifecycle"

// Report is what one pass did.
type Report struct {
	// Skipped: another instance held the lock; nothing was done.
	Skipped          bool
	Created, Dropped int
	KeysDeleted      int64
	// Resolved rows deleted past the payload horizon: dead letters
	// replayed, parked relay records released.
	DeadLettersDeleted, ParkedDeleted int64
	// Reconciliation runs deleted past the key horizon (each source's
	// watermark run kept), and their corrections.
	ReconcileRunsDeleted, CorrectionsDeleted int64
	// Object links deleted past the links horizon.
	LinksDeleted int64
	// The admin API's Idempotency-Keys deleted past their horizon.
	IdempotencyKeysDeleted int64
	// Deliveries to endpoints deleted past the payload horizon, and their
	// failed attempts with them.
	DeliveriesDeleted, DeliveryAttemptsDeleted int64
	LegacyDropped                              bool
	WALBytes                                   int64 // LSN difference around the pass (concurrent writes included)
	Took                                       time.Duration
}

// deleted is how many rows of plain tables the pass deleted.
func (r Report) deleted() int64 {
	return r.KeysDeleted + r.DeadLettersDeleted + r.ParkedDeleted + r.ReconcileRunsDeleted + r.CorrectionsDeleted + r.LinksDeleted +
		r.IdempotencyKeysDeleted + r.DeliveriesDeleted + r.DeliveryAttemptsDeleted
}

// Pass makes one round: partitions ahead, aged partitions dropped, expired
// keys, resolved dead letters and parked records, old reconciliation runs
// and object links deleted, the tables migration 00009 replaced dropped
// once empty of anything within its horizon.
func (m *Manager) Pass(ctx context.Context) (Report, error) {
	start := time.Now()
	var r Report
	conn, err := m.pool.Acquire(ctx)
	if err != nil {
		return r, fmt.Errorf("lifecycle connection: %w", err)
	}
	defer conn.Release()
	var got bool
	if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock(hashtextextended($1, 0))`, lockKey).Scan(&got); err != nil {
		return r, fmt.Errorf("lifecycle lock: %w", err)
	}
	if !got {
		r.Skipped = true
		return r, nil
	}
	defer func() {
		// A connection whose unlock failed is not returned to the pool
		// still holding the lock.
		_, err := conn.Exec(context.Background(), `RESET lock_timeout`)
		if err == nil {
			_, err = conn.Exec(context.Background(), `SELECT pg_advisory_unlock(hashtextextended($1, 0))`, lockKey)
		}
		if err != nil {
			conn.Conn().Close(context.Background()) //nolint:errcheck // already failing
		}
	}()
	if _, err := conn.Exec(ctx, fmt.Sprintf(`SET lock_timeout = %d`, m.cfg.LockTimeout.Milliseconds())); err != nil {
		return r, fmt.Errorf("lifecycle lock timeout: %w", err)
	}
	var lsn0 string
	if err := conn.QueryRow(ctx, `SELECT pg_current_wal_lsn()::text`).Scan(&lsn0); err != nil {
		return r, fmt.Errorf("wal position: %w", err)
	}
	err = m.pass(ctx, conn, &r)
	var wal int64
	if werr := conn.QueryRow(context.Background(), `SELECT pg_current_wal_lsn() - $1::pg_lsn`, lsn0).Scan(&wal); werr == nil {
		r.WALBytes = wal
		m.metrics.walBytes.Add(float64(wal))
	}
	r.Took = time.Since(start)
	m.metrics.passSecs.Add(r.Took.Seconds())
	if err != nil {
		return r, err
	}
	m.metrics.passes.Inc()
	m.metrics.lastPassS.SetToCurrentTime()
	if r.Created+r.Dropped > 0 || r.deleted() > 0 || r.LegacyDropped {
		m.log.Info("lifecycle pass", slog.Int("partitions_created", r.Created), slog.Int("partitions_dropped", r.Dropped),
			slog.Int64("keys_deleted", r.KeysDeleted), slog.Int64("dead_letters_deleted", r.DeadLettersDeleted),
			slog.Int64("parked_deleted", r.ParkedDeleted), slog.Int64("reconcile_runs_deleted", r.ReconcileRunsDeleted),
			slog.Int64("corrections_deleted", r.CorrectionsDeleted), slog.Int64("links_deleted", r.LinksDeleted),
			slog.Int64("idempotency_keys_deleted", r.IdempotencyKeysDeleted),
			slog.Int64("deliveries_deleted", r.DeliveriesDeleted), slog.Int64("delivery_attempts_deleted", r.DeliveryAttemptsDeleted),
			slog.Bool("legacy_dropped", r.LegacyDropped), slog.Int64("wal_bytes", r.WALBytes), slog.Duration("took", r.Took))
	}
	return r, nil
}

func (m *Manager) pass(ctx context.Context, conn *pgxpool.Conn, r *Report) error {
	now := m.cfg.Now()
	cutoff := map[horizon]time.Time{payloadHorizon: now.Add(-m.cfg.PayloadHorizon), keyHorizon: now.Add(-m.cfg.KeyHorizon),
		linksHorizon: now.Add(-m.cfg.LinksHorizon), idempotencyHorizon: now.Add(-m.cfg.IdempotencyHorizon)}
	for _, t := range tables {
		have, err := listPartitions(ctx, conn, t.name)
		if err != nil {
			return err
		}
		n, err := m.ensure(ctx, conn, t, have, now)
		r.Created += n
		if err != nil {
			return err
		}
		if m.cfg.NoCleanup {
			continue
		}
		n, err = m.dropAged(ctx, conn, t, have, cutoff[t.horizon])
		r.Dropped += n
		if err != nil {
			return err
		}
	}
	if m.cfg.NoCleanup {
		return ctx.Err()
	}
	// The expired-key scan goes through the BRIN index on received_at, and
	// a BRIN scan reads every block range not summarized yet: until VACUUM
	// summarizes them, each pass would read every row ingested since, even
	// with nothing expired. Summarizing the new ranges first reads each new
	// block once, so a pass costs what arrived since the last one, not what
	// arrived since the last VACUUM. It needs the index's owner; a role that
	// is not only gets the slower scan.
	if _, err := conn.Exec(ctx, `SELECT brin_summarize_new_values('inbox_received_at'::regclass)`); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		m.log.Warn("lifecycle: could not summarize inbox_received_at; expired keys are found by a slower scan", slog.Any("error", err))
	}
	for _, d := range m.deletions(r) {
		if err := m.batches(ctx, conn, d, cutoff[d.horizon]); err != nil {
			return fmt.Errorf("%s: %w", d.what, err)
		}
	}
	for _, l := range legacies {
		dropped, err := m.dropLegacy(ctx, conn, l, cutoff)
		if err != nil {
			return err
		}
		r.LegacyDropped = r.LegacyDropped || dropped
	}
	return ctx.Err()
}

// deletion is a batched DELETE of rows past a horizon: its query takes the
// cutoff ($1) and the batch size ($2) and returns one row of counts, one
// per tally, the first of the rows the batch is cut by.
type deletion struct {
	what    string
	query   string
	horizon horizon
	tallies []tally
}

// tally is where one count of a deletion goes: the pass's report and a
// counter.
type tally struct {
	n       *int64
	counter prometheus.Counter
}

// deletions are a pass's batched DELETEs, in order, counted into r.
func (m *Manager) deletions(r *Report) []deletion {
	return []deletion{
		{"expire keys", expireKeysSQL, keyHorizon, []tally{{&r.KeysDeleted, m.metrics.keys}}},
		// Resolved dead letters and parked records go past the payload
		// horizon (they hold bodies; it is never shorter than the topics'
		// retention, so Kafka can no longer bring their record back to be
		// judged against their unique keys).
		{"expire replayed dead letters", expireDeadLettersSQL, payloadHorizon,
			[]tally{{&r.DeadLettersDeleted, m.metrics.resolved.WithLabelValues("dead_letters")}}},
		{"expire released parked records", expireParkedSQL, payloadHorizon,
			[]tally{{&r.ParkedDeleted, m.metrics.resolved.WithLabelValues("cdc_parked")}}},
		// A run's corrections name the inbox rows it entered: kept as long
		// as those keys.
		{"expire reconcile runs", expireReconcileRunsSQL, keyHorizon,
			[]tally{{&r.ReconcileRunsDeleted, m.metrics.agedRuns}, {&r.CorrectionsDeleted, m.metrics.agedCorrections}}},
		{"expire object links", expireLinksSQL, linksHorizon, []tally{{&r.LinksDeleted, m.metrics.agedLinks}}},
		{"expire idempotency keys", expireIdempotencyKeysSQL, idempotencyHorizon,
			[]tally{{&r.IdempotencyKeysDeleted, m.metrics.agedIdempotencyKeys}}},
		// A delivery is kept for the payload horizon whatever its state. A
		// rewind of the fan-out cannot reach further back (the topics'
		// retention, which start-up keeps within the payload horizon), and
		// a delivery row still there is what makes a rewound event insert
		// nothing (unique per endpoint and webhook_id), so a delivered
		// event is never sent again. A pending one that old is past any
		// retry horizon: dead in all but name, and its body is gone.
		{"expire deliveries", expireDeliveriesSQL, payloadHorizon,
			[]tally{{&r.DeliveriesDeleted, m.metrics.agedDeliveries}, {&r.DeliveryAttemptsDeleted, m.metrics.agedDeliveryAttempts}}},
	}
}

// batches runs d until a batch comes back short.
func (m *Manager) batches(ctx context.Context, conn *pgxpool.Conn, d deletion, cutoff time.Time) error {
	counts := make([]int64, len(d.tallies))
	into := make([]any, len(counts))
	for i := range counts {
		into[i] = &counts[i]
	}
	for ctx.Err() == nil {
		if err := conn.QueryRow(ctx, d.query, cutoff, m.cfg.KeyBatch).Scan(into...); err != nil {
			return err
		}
		for i, t := range d.tallies {
			*t.n += counts[i]
			t.counter.Add(float64(counts[i]))
		}
		if counts[0] < int64(m.cfg.KeyBatch) {
			break
		}
	}
	return nil
}

// legacy is a table a migration replaced by a partitioned one, still read
// (through a view) until nothing in it is within its horizon.
type legacy struct {
	tables             string
	exists, live, drop string
	args               func(cutoff map[horizon]time.Time) []any
}

var legacies = []legacy{
	{"inbox_duplicates_v1, inbox_conflicts_v1", legacyExistsSQL, legacyLiveSQL, legacyDropSQL,
		func(c map[horizon]time.Time) []any { return []any{c[keyHorizon], c[payloadHorizon]} }},
	{"dispatch_log", legacyDispatchExistsSQL, legacyDispatchLiveSQL, legacyDispatchDropSQL,
		func(c map[horizon]time.Time) []any { return []any{c[keyHorizon]} }},
}

// dropLegacy drops l's tables, and takes them out of their view, once they
// hold nothing within their horizon.
func (m *Manager) dropLegacy(ctx context.Context, conn *pgxpool.Conn, l legacy, cutoff map[horizon]time.Time) (bool, error) {
	var exists, live bool
	if err := conn.QueryRow(ctx, l.exists).Scan(&exists); err != nil {
		return false, fmt.Errorf("replaced tables %s: %w", l.tables, err)
	}
	if !exists {
		return false, nil
	}
	if err := conn.QueryRow(ctx, l.live, l.args(cutoff)...).Scan(&live); err != nil {
		return false, fmt.Errorf("replaced tables %s: %w", l.tables, err)
	}
	if live {
		return false, nil
	}
	if err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, l.drop)
		return err
	}); err != nil {
		return false, fmt.Errorf("drop replaced tables %s: %w", l.tables, err)
	}
	m.log.Info("replaced tables dropped", slog.String("tables", l.tables))
	return true, nil
}
