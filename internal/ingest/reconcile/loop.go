package reconcile

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/sluicehq/sluice/internal/provider"
)

// due is a source the schedule may reconcile, and when its last automatic
// run began (zero: never).
type due struct {
	sourceID string
	last     time.Time
}

// sources lists the enabled sources with API credentials.
func (r *Runner) sources(ctx context.Context) ([]due, error) {
	rows, err := r.pool.Query(ctx, sourcesSQL)
	if err != nil {
		return nil, fmt.Errorf("list sources to reconcile: %w", err)
	}
	defer rows.Close()
	var out []due
	for rows.Next() {
		var (
			d    due
			last *time.Time
		)
		if err := rows.Scan(&d.sourceID, &last); err != nil {
			return nil, fmt.Errorf("list sources to reconcile: %w", err)
		}
		if last != nil {
			d.last = *last
		}
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list sources to reconcile: %w", err)
	}
	return out, nil
}

// All reconciles every enabled source with API credentials over w; a
// source another instance is reconciling is skipped. It returns the
// reports of the sources it ran and the first error.
func (r *Runner) All(ctx context.Context, w provider.Window) ([]Report, error) {
	srcs, err := r.sources(ctx)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(srcs))
	for i, s := range srcs {
		ids[i] = s.sourceID
	}
	return r.each(ctx, ids, w)
}

func (r *Runner) each(ctx context.Context, ids []string, w provider.Window) ([]Report, error) {
	var (
		reports []Report
		first   error
	)
	for _, id := range ids {
		rep, err := r.Source(ctx, id, w)
		switch {
		case errors.Is(err, ErrBusy):
			continue
		case err != nil && first == nil:
			first = err
		}
		reports = append(reports, rep)
	}
	return reports, first
}

// Loop is the schedule inside serve and ingest: it begins an automatic run
// of each source once Every has passed since the source's last automatic
// run began, as Postgres has it, so a process restarted more often than
// Every (deploys, autoscaling) still reconciles every Every, and a source
// never reconciled is due at once. Each wait ends a random Jitter later,
// so instances restarted together do not all call a provider at the same
// moment. Instances may all loop: a source's lock lets one at a time
// reconcile it, and the others skip it (its new run row makes it due an
// interval later for all).
func (r *Runner) Loop(ctx context.Context) error {
	for {
		wait, err := r.round(ctx)
		if err != nil && ctx.Err() == nil {
			r.log.Warn("reconcile round failed", slog.Any("error", err))
		}
		if err := sleep(ctx, wait+r.jitter()); err != nil {
			return nil
		}
	}
}

// round runs the sources that are due and says how long until the next
// one is (at most Every, so a new source waits no longer).
func (r *Runner) round(ctx context.Context) (time.Duration, error) {
	srcs, err := r.sources(ctx)
	if err != nil {
		return r.cfg.Every, err
	}
	now := time.Now()
	wait := r.cfg.Every
	var ids []string
	for _, s := range srcs {
		if left := s.last.Add(r.cfg.Every).Sub(now); left > 0 {
			wait = min(wait, left)
			continue
		}
		ids = append(ids, s.sourceID)
	}
	_, err = r.each(ctx, ids, provider.Window{})
	return wait, err
}

func (r *Runner) jitter() time.Duration {
	if r.cfg.Jitter <= 0 {
		return 0
	}
	return rand.N(r.cfg.Jitter)
}
