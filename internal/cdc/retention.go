package cdc

import (
	"context"
	"log/slog"
	"time"
)

// retain removes outbox rows once they are older than the retention window
// measured from what the relay confirmed, not from the wall clock: a relay
// that fell behind (or a Kafka outage) never lets retention remove a row
// Kafka does not have yet. It runs only on the leader, beside the stream.
func (r *Relay) retain(ctx context.Context) {
	every(ctx, r.cfg.RetentionInterval, func() {
		wm := r.current.Load()
		if wm == nil {
			return
		}
		confirmedAt := wm.progress().confirmedAt
		if confirmedAt.IsZero() {
			return // nothing confirmed with a known time in this session yet
		}
		cutoff := confirmedAt.Add(-r.cfg.Retention)
		deleted, err := r.deleteBefore(ctx, cutoff)
		if err != nil && ctx.Err() == nil {
			r.log.Warn("outbox retention failed", slog.Any("error", err))
		}
		if deleted > 0 {
			r.log.Info("outbox retention", slog.Int64("deleted", deleted), slog.Time("before", cutoff))
		}
		r.testSignals.retained.Signal(deleted)
	})
}

// deleteBefore removes rows created before cutoff in batches.
func (r *Relay) deleteBefore(ctx context.Context, cutoff time.Time) (int64, error) {
	var total int64
	for ctx.Err() == nil {
		tag, err := r.pool.Exec(ctx, retentionSQL, cutoff, r.cfg.RetentionBatch)
		if err != nil {
			return total, err
		}
		n := tag.RowsAffected()
		total += n
		r.metrics.retained.Add(float64(n))
		if n < int64(r.cfg.RetentionBatch) {
			break
		}
	}
	return total, nil
}
