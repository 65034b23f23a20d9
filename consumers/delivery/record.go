package delivery

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sluicehq/sluice/internal/audit"
	"github.com/sluicehq/sluice/internal/store/endpoints"
)

// record writes a's outcome with what follows from it: the next delivery
// of the key woken once this one is delivered or dead, the endpoint's
// failure streak, and the endpoint disabled when it answered 410 or failed
// for the failing horizon.
func (d *Deliverer) record(ctx context.Context, t *endpoints.Target, m message, a endpoints.Attempt, retryAfter time.Duration) error {
	finished, died, err := d.recordOutcome(ctx, t, m, a, retryAfter)
	if err != nil {
		return err
	}
	if finished && t.Ordered {
		// Once more after the commit: a next of the key written and parked
		// while the outcome's transaction ran was not there for the first
		// (park.sql).
		if _, err := d.pool.Exec(ctx, promoteSQL, t.ID, m.key, m.id); err != nil {
			return fmt.Errorf("wake the next of its key: %w", err)
		}
	}
	d.m.outcome(a, died)
	if a.OK() && t.FailingSince != nil {
		recovered := *t
		recovered.FailingSince = nil
		d.replaceTarget(recovered)
	}
	return nil
}

// recordOutcome writes a's outcome: a success in one statement (with the
// next of its key woken), a failure in a transaction. It says whether the
// delivery is finished (delivered or dead) and whether it died.
func (d *Deliverer) recordOutcome(ctx context.Context, t *endpoints.Target, m message, a endpoints.Attempt, retryAfter time.Duration) (finished, died bool, err error) {
	if a.OK() {
		if _, err := d.pool.Exec(ctx, deliveredSQL, m.id, a.Status, a.LatencyMS, t.Ordered); err != nil {
			return false, false, fmt.Errorf("record delivered: %w", err)
		}
		if t.FailingSince != nil {
			if _, err := d.pool.Exec(ctx, recoveredSQL, t.ID); err != nil {
				return true, false, fmt.Errorf("record recovery: %w", err)
			}
		}
		return true, false, nil
	}
	err = pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		var err error
		if died, err = d.recordFailure(ctx, tx, t, m, a, retryAfter); err != nil {
			return err
		}
		if died && t.Ordered {
			if _, err := tx.Exec(ctx, promoteSQL, t.ID, m.key, m.id); err != nil {
				return fmt.Errorf("wake the next of its key: %w", err)
			}
		}
		return nil
	})
	return died, died, err
}

// recordFailure keeps the attempt, schedules the next (or, past the
// horizon, gives up) and judges the endpoint. It returns whether the
// delivery is dead.
func (d *Deliverer) recordFailure(ctx context.Context, tx pgx.Tx, t *endpoints.Target, m message, a endpoints.Attempt, retryAfter time.Duration) (bool, error) {
	horizon := d.cfg.Horizon
	if m.missing {
		horizon = 0 // nothing to send, ever
	}
	// Retry-After is the least wait, up to the longest backoff: a receiver
	// cannot park its key for longer than Sluice would wait anyway.
	next := time.Now().Add(max(d.backoff(m.attempt), min(retryAfter, d.cfg.BackoffMax)))
	var status *int
	if a.Status != 0 {
		status = &a.Status
	}
	var died bool
	err := tx.QueryRow(ctx, failedSQL, m.id, m.attempt, t.ID, next, status, a.LatencyMS, a.ErrorClass, a.Error,
		horizon.Seconds(), a.Answer).Scan(&died)
	if err != nil && err != pgx.ErrNoRows {
		return false, fmt.Errorf("record failed attempt: %w", err)
	}
	var since time.Time
	if err := tx.QueryRow(ctx, failingSQL, t.ID).Scan(&since); err != nil {
		return died, fmt.Errorf("record failure streak: %w", err)
	}
	switch {
	case a.Status == http.StatusGone:
		return died, d.disable(ctx, tx, t, "gone")
	case time.Since(since) >= d.cfg.FailingHorizon:
		return died, d.disable(ctx, tx, t, "failing")
	}
	return died, nil
}

// disable turns t off for reason, audited as the deliverer's doing (an
// entry without a token).
func (d *Deliverer) disable(ctx context.Context, tx pgx.Tx, t *endpoints.Target, reason string) error {
	var tenant string
	err := tx.QueryRow(ctx, disableSQL, t.ID, reason).Scan(&tenant)
	if err == pgx.ErrNoRows {
		return nil // disabled already
	}
	if err != nil {
		return fmt.Errorf("disable endpoint: %w", err)
	}
	d.m.disabled.WithLabelValues(reason).Inc()
	d.log.Warn("endpoint disabled", slog.String("event", "delivery.endpoint_disabled"), slog.String("endpoint_id", t.ID),
		slog.String("tenant_id", tenant), slog.String("reason", reason))
	return (&audit.Actor{}).Record(ctx, tx, audit.Target{Action: "endpoint.auto_disable", Resource: "endpoint", ID: t.ID, TenantID: tenant})
}

// backoff is the wait after failed attempt n: BackoffBase times 4^(n-1),
// at most BackoffMax, jittered to 75-125% so retries of many deliveries do
// not arrive together.
func (d *Deliverer) backoff(n int) time.Duration {
	wait := d.cfg.BackoffBase
	for i := 1; i < n && wait < d.cfg.BackoffMax; i++ {
		wait *= 4
	}
	wait = min(wait, d.cfg.BackoffMax)
	return time.Duration(float64(wait) * (0.75 + rand.Float64()/2))
}

// replaceTarget updates the running loop's target (its failure streak
// ended) until the next read of the endpoints.
func (d *Deliverer) replaceTarget(t endpoints.Target) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if l := d.loops[t.ID]; l != nil {
		l.update(t)
	}
}
