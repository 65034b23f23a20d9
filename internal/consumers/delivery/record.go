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

// delivered hands a 2xx to the writer, which records it with others in
// one statement; the endpoint's failure streak, if it had one, ends now.
func (d *Deliverer) delivered(l *loop, t *endpoints.Target, m message, a endpoints.Attempt) {
	d.m.outcome(a, false)
	d.writer.add(written{loop: l, id: m.id, status: a.Status, latencyMS: a.LatencyMS, attempt: m.attempt, at: a.At, rulesVersion: a.RulesVersion})
	if t.FailingSince == nil {
		return
	}
	if err := d.recover(context.WithoutCancel(l.ctx), t); err != nil {
		l.warn("record recovery", "delivery.record_failed", err)
		return
	}
	recovered := *t
	recovered.FailingSince = nil
	d.replaceTarget(recovered)
}

// nextTry is when a delivery whose attempt failed is tried again:
// Retry-After is the least wait, up to the longest backoff (a receiver
// cannot park its key for longer than Sluice would wait anyway).
func (d *Deliverer) nextTry(m message, retryAfter time.Duration) time.Time {
	return time.Now().Add(max(d.backoff(m.attempt), min(retryAfter, d.cfg.BackoffMax)))
}

// recordFailed keeps a failed attempt, schedules the next at next (or,
// past the horizon, gives up) and judges the endpoint, in one transaction:
// a 410 or the failing horizon disables it. It returns whether the
// delivery is dead.
func (d *Deliverer) recordFailed(ctx context.Context, t *endpoints.Target, m message, a endpoints.Attempt, next time.Time) (bool, error) {
	horizon := d.cfg.Horizon
	if m.missing || a.ErrorClass == endpoints.ErrorClassTransformation {
		horizon = 0 // nothing to send, ever; or rules that fail over this event
	}
	var status *int
	if a.Status != 0 {
		status = &a.Status
	}
	var died bool
	err := pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx, failedSQL, m.id, m.attempt, t.ID, next, status, a.LatencyMS, a.ErrorClass, a.Error,
			horizon.Seconds(), a.Answer, nonZero(a.RulesVersion)).Scan(&died)
		if err != nil && err != pgx.ErrNoRows {
			return fmt.Errorf("record failed attempt: %w", err)
		}
		var since time.Time
		if err := tx.QueryRow(ctx, failingSQL, t.ID).Scan(&since); err != nil {
			return fmt.Errorf("record failure streak: %w", err)
		}
		if d.deployment(t) {
			return nil // the operator's: it waits, it is not turned off
		}
		if err := d.announceFailing(ctx, tx, t, since, a); err != nil {
			return err
		}
		switch {
		case a.Status == http.StatusGone:
			return d.disable(ctx, tx, t, "gone")
		case time.Since(since) >= d.cfg.FailingHorizon:
			return d.disable(ctx, tx, t, "failing")
		}
		return nil
	})
	if err != nil {
		return false, err
	}
	d.m.outcome(a, died)
	return died, nil
}

// disable turns t off for reason, audited as the deliverer's doing (an
// entry without a token).
func (d *Deliverer) disable(ctx context.Context, tx pgx.Tx, t *endpoints.Target, reason string) error {
	var (
		tenant string
		at     time.Time
		since  *time.Time
	)
	err := tx.QueryRow(ctx, disableSQL, t.ID, reason).Scan(&tenant, &at, &since)
	if err == pgx.ErrNoRows {
		return nil // disabled already
	}
	if err != nil {
		return fmt.Errorf("disable endpoint: %w", err)
	}
	d.m.disabled.WithLabelValues(reason).Inc()
	d.log.Warn("endpoint disabled", slog.String("event", "delivery.endpoint_disabled"), slog.String("endpoint_id", t.ID),
		slog.String("tenant_id", tenant), slog.String("reason", reason))
	if err := (&audit.Actor{}).Record(ctx, tx, audit.Target{Action: "endpoint.auto_disable", Resource: "endpoint", ID: t.ID, TenantID: tenant}); err != nil {
		return err
	}
	return d.tell(ctx, tx, endpoints.Transition{Type: endpoints.EndpointDisabled, TenantID: tenant, EndpointID: t.ID, At: at,
		Reason: endpoints.DisabledReason(reason), FailingSince: since})
}

// nonZero is v, or NULL when it is 0 (unknown).
func nonZero(v int64) *int64 {
	if v == 0 {
		return nil
	}
	return &v
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
