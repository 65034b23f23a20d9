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
	LegacyDropped                     bool
	WALBytes                          int64 // LSN difference around the pass (concurrent writes included)
	Took                              time.Duration
}

// Pass makes one round: partitions ahead, aged partitions dropped, expired
// keys deleted, the tables migration 00009 replaced dropped once empty of
// anything within its horizon.
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
	if r.Created+r.Dropped > 0 || r.KeysDeleted+r.DeadLettersDeleted+r.ParkedDeleted > 0 || r.LegacyDropped {
		m.log.Info("lifecycle pass", slog.Int("partitions_created", r.Created), slog.Int("partitions_dropped", r.Dropped),
			slog.Int64("keys_deleted", r.KeysDeleted), slog.Int64("dead_letters_deleted", r.DeadLettersDeleted),
			slog.Int64("parked_deleted", r.ParkedDeleted), slog.Bool("legacy_dropped", r.LegacyDropped),
			slog.Int64("wal_bytes", r.WALBytes), slog.Duration("took", r.Took))
	}
	return r, nil
}

func (m *Manager) pass(ctx context.Context, conn *pgxpool.Conn, r *Report) error {
	now := m.cfg.Now()
	cutoff := map[horizon]time.Time{payloadHorizon: now.Add(-m.cfg.PayloadHorizon), keyHorizon: now.Add(-m.cfg.KeyHorizon)}
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
	// a BRIN scan reads every block range not summarized yet: before VACUUM
	// summarizes them, that was every row ingested since, each pass, even
	// with nothing expired (90 ms for 600,000 rows, 0.1 ms summarized).
	// Summarizing the new ranges first reads each new block once. It needs
	// the index's owner; a role that is not only gets the slower scan.
	if _, err := conn.Exec(ctx, `SELECT brin_summarize_new_values('inbox_received_at'::regclass)`); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		m.log.Warn("lifecycle: could not summarize inbox_received_at; expired keys are found by a slower scan", slog.Any("error", err))
	}
	var err error
	if r.KeysDeleted, err = m.batches(ctx, conn, expireKeysSQL, cutoff[keyHorizon], m.metrics.keys); err != nil {
		return fmt.Errorf("expire keys: %w", err)
	}
	// Resolved dead letters and parked records go past the payload horizon
	// (they hold bodies; it is never shorter than the topics' retention, so
	// Kafka can no longer bring their record back to be judged against
	// their unique keys).
	if r.DeadLettersDeleted, err = m.batches(ctx, conn, expireDeadLettersSQL, cutoff[payloadHorizon], m.metrics.resolved.WithLabelValues("dead_letters")); err != nil {
		return fmt.Errorf("expire replayed dead letters: %w", err)
	}
	if r.ParkedDeleted, err = m.batches(ctx, conn, expireParkedSQL, cutoff[payloadHorizon], m.metrics.resolved.WithLabelValues("cdc_parked")); err != nil {
		return fmt.Errorf("expire released parked records: %w", err)
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

// batches runs a batched DELETE (query: cutoff $1, batch size $2, one count
// out) until a batch comes back short.
func (m *Manager) batches(ctx context.Context, conn *pgxpool.Conn, query string, cutoff time.Time, counter prometheus.Counter) (int64, error) {
	var total int64
	for ctx.Err() == nil {
		var n int64
		if err := conn.QueryRow(ctx, query, cutoff, m.cfg.KeyBatch).Scan(&n); err != nil {
			return total, err
		}
		total += n
		counter.Add(float64(n))
		if n < int64(m.cfg.KeyBatch) {
			break
		}
	}
	return total, nil
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
