package lifecycle

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// lockKey is the advisory lock one pass holds, so one manager works at a time.
const lockKey = "sluice.lifecycle"

// Report is what one pass did.
type Report struct {
	// Skipped: another instance held the lock; nothing was done.
	Skipped          bool
	Created, Dropped int
	KeysDeleted      int64
	LegacyDropped    bool
	WALBytes         int64 // LSN difference around the pass (concurrent writes included)
	Took             time.Duration
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
	if r.Created+r.Dropped > 0 || r.KeysDeleted > 0 || r.LegacyDropped {
		m.log.Info("lifecycle pass", slog.Int("partitions_created", r.Created), slog.Int("partitions_dropped", r.Dropped),
			slog.Int64("keys_deleted", r.KeysDeleted), slog.Bool("legacy_dropped", r.LegacyDropped),
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
		n, err = m.dropAged(ctx, conn, t, have, cutoff[t.horizon])
		r.Dropped += n
		if err != nil {
			return err
		}
	}
	for ctx.Err() == nil {
		var n int64
		if err := conn.QueryRow(ctx, expireKeysSQL, cutoff[keyHorizon], m.cfg.KeyBatch).Scan(&n); err != nil {
			return fmt.Errorf("expire keys: %w", err)
		}
		r.KeysDeleted += n
		m.metrics.keys.Add(float64(n))
		if n < int64(m.cfg.KeyBatch) {
			break
		}
	}
	var exists, live bool
	if err := conn.QueryRow(ctx, legacyExistsSQL).Scan(&exists); err != nil {
		return fmt.Errorf("replaced tables: %w", err)
	}
	if !exists {
		return ctx.Err()
	}
	if err := conn.QueryRow(ctx, legacyLiveSQL, cutoff[keyHorizon], cutoff[payloadHorizon]).Scan(&live); err != nil {
		return fmt.Errorf("replaced tables: %w", err)
	}
	if !live {
		if err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, legacyDropSQL)
			return err
		}); err != nil {
			return fmt.Errorf("drop replaced tables: %w", err)
		}
		r.LegacyDropped = true
		m.log.Info("replaced tables dropped", slog.String("tables", "inbox_duplicates_v1, inbox_conflicts_v1"))
	}
	return ctx.Err()
}
