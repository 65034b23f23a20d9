package delivery

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sluicehq/sluice/internal/envelope"
	"github.com/sluicehq/sluice/internal/store/endpoints"
)

// Operational events (endpoints.Announce) are written by the endpoint's
// owner in the transaction that changes the endpoint's state, so a
// transition and its event commit together or not at all; their event key
// (the endpoint, the transition, its moment as the row holds it) makes a
// second writer (an owner killed after the commit, a retried transaction)
// write nothing. The fan-out never delivers one to the endpoint it is
// about, so an endpoint failing on them feeds on no news of itself.

// tell writes tr's operational event in tx.
func (d *Deliverer) tell(ctx context.Context, tx pgx.Tx, tr endpoints.Transition) error {
	wrote, err := endpoints.Announce(ctx, tx, envelope.Topics{Prefix: d.cfg.Name}, tr)
	if err != nil {
		return err
	}
	if wrote {
		d.m.announced.WithLabelValues(string(tr.Type)).Inc()
		d.log.Info("endpoint transition announced", slog.String("event", "delivery.endpoint_announced"), slog.String("type", string(tr.Type)),
			slog.String("endpoint_id", tr.EndpointID), slog.String("tenant_id", tr.TenantID), slog.String("event_id", tr.EventID()))
	}
	return nil
}

// announceFailing tells, once per streak, that every attempt to t failed
// since since, once that is FailingNotice ago. Every later failed attempt
// of the streak tries the same key and writes nothing: one probe of the
// inbox's unique index per failed attempt, and past the notice the breaker
// lets about one attempt through per cooldown (at most 10 min), so no
// memory of what was told is kept (it could only be wrong after a crash).
func (d *Deliverer) announceFailing(ctx context.Context, tx pgx.Tx, t *endpoints.Target, since time.Time, a endpoints.Attempt) error {
	if time.Since(since) < d.cfg.FailingNotice {
		return nil
	}
	return d.tell(ctx, tx, endpoints.Transition{Type: endpoints.EndpointFailing, TenantID: t.TenantID, EndpointID: t.ID, At: since,
		FailingSince: &since, LastStatus: a.Status, LastErrorClass: a.ErrorClass})
}

// recover ends t's failure streak after a 2xx and, if the streak was told
// as failing, tells its end, in one transaction.
func (d *Deliverer) recover(ctx context.Context, t *endpoints.Target) error {
	return pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		var (
			tenant *string
			since  time.Time
		)
		err := tx.QueryRow(ctx, recoveredSQL, t.ID).Scan(&tenant, &since)
		if err == pgx.ErrNoRows {
			return nil // ended already
		}
		if err != nil {
			return fmt.Errorf("end failure streak: %w", err)
		}
		if tenant == nil {
			return nil // the deployment's endpoint: no tenant to tell
		}
		return d.tell(ctx, tx, endpoints.Transition{Type: endpoints.EndpointRecovered, TenantID: *tenant, EndpointID: t.ID, At: since,
			FailingSince: &since})
	})
}
