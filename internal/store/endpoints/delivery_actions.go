package endpoints

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sluicehq/sluice/internal/audit"
	"github.com/sluicehq/sluice/internal/refusal"
)

// Retry sends delivery id again: dead, delivered or pending, it becomes
// pending, due now, with the same webhook_id (the receiver deduplicates on
// it). Its attempts and last figures stay (history; the next request counts
// on from them). On an ordered endpoint it goes before every later pending
// delivery of its resource key, as its id says. Audited (delivery.retry).
//
// A pending delivery may be on its way now: retrying one makes it due now
// if it waits for a retry, and changes nothing if it is being sent.
func (s Store) Retry(ctx context.Context, id int64) (Delivery, error) {
	notFound := refusal.NoSuch("delivery", id)
	if id < 1 {
		return Delivery{}, notFound
	}
	err := pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
		var (
			tenant string
			told   bool
		)
		if err := tx.QueryRow(ctx, deliveryRetrySQL, id).Scan(&tenant, &told); err != nil {
			return err
		}
		return s.Actor.Record(ctx, tx, audit.Target{Action: "delivery.retry", Resource: "delivery", ID: strconv.FormatInt(id, 10), TenantID: tenant})
	})
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return Delivery{}, notFound
	case err != nil:
		return Delivery{}, fmt.Errorf("retry delivery %d: %w", id, err)
	}
	return s.Delivery(ctx, id)
}

// MaxReplay is the most deliveries one Replay moves back to pending: one
// transaction never locks more rows than that. A window holding more is
// replayed from its oldest, and the answer says where to go on from
// (Replayed.NextSince).
const MaxReplay = 10_000

// DefaultPayloadHorizon is the payload horizon a Store without one
// assumes (the lifecycle's default).
const DefaultPayloadHorizon = 7 * 24 * time.Hour

// ReplayWindow is what Replay sends again: the deliveries of one endpoint
// created in [Since, Until).
type ReplayWindow struct {
	EndpointID   string
	Since, Until time.Time
	// TenantID confines the replay: an endpoint of another tenant is not
	// found, exactly like one that does not exist. Empty: any tenant's.
	TenantID string
	// Horizon is the payload horizon: a window longer than it is refused
	// (deliveries and bodies older than it are gone). 0:
	// DefaultPayloadHorizon.
	Horizon time.Duration
}

// Replayed is what a replay did.
type Replayed struct {
	EndpointID string `json:"endpoint_id"`
	TenantID   string `json:"tenant_id"`
	// Replayed counts the deliveries moved back to pending, due now.
	Replayed int64 `json:"replayed" doc:"Deliveries moved back to pending, due now."`
	// NextSince is set when the window held more than MaxReplay: replay
	// [NextSince, until) for the rest. The deliveries replayed at that very
	// instant are pending and are skipped, unless delivered meanwhile (then
	// they are sent once more, with the same webhook_id).
	NextSince *time.Time `json:"next_since,omitempty" doc:"Set when the window held more than 10000 deliveries: replay again with this since (same until) for the rest."`
}

// Replay sends every delivery of an endpoint created in the window again,
// oldest first, whatever its state: delivered and dead ones become pending,
// due now; pending ones are left to their schedule (one may be on its
// way now), so they are not counted. At most
// MaxReplay per call. Audited (endpoint.replay), in the replay's
// transaction.
func (s Store) Replay(ctx context.Context, w ReplayWindow) (Replayed, error) {
	out := Replayed{EndpointID: w.EndpointID}
	if err := w.check(); err != nil {
		return out, err
	}
	err := pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
		var tenant *string
		if w.TenantID != "" {
			tenant = &w.TenantID
		}
		if err := tx.QueryRow(ctx, replayEndpointSQL, w.EndpointID, tenant).Scan(&out.TenantID); err != nil {
			return err
		}
		var (
			last *time.Time
			told *int64
		)
		if err := tx.QueryRow(ctx, deliveryReplaySQL, w.EndpointID, w.Since, w.Until, MaxReplay).Scan(&out.Replayed, &last, &told); err != nil {
			return err
		}
		if out.Replayed == MaxReplay && last != nil {
			out.NextSince = last
		}
		return s.Actor.Record(ctx, tx, audit.Target{Action: "endpoint.replay", Resource: "endpoint", ID: w.EndpointID, TenantID: out.TenantID})
	})
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return out, refusal.NoSuch("endpoint", w.EndpointID)
	case err != nil:
		return out, fmt.Errorf("replay endpoint %s: %w", w.EndpointID, err)
	}
	return out, nil
}

// ReplayCount is a replay's dry run: how many deliveries Replay with the
// same window would send again now (at most MaxReplay; More says the
// window holds more, for the calls after it). The window is checked as
// Replay checks it, the endpoint confined as Replay confines it, and
// nothing changes.
type ReplayCount struct {
	EndpointID string `json:"endpoint_id"`
	TenantID   string `json:"tenant_id"`
	Replayable int64  `json:"replayable" doc:"Delivered and dead deliveries of the window a replay would send again now (at most 10000: one replay's cap)."`
	More       bool   `json:"more" doc:"The window holds more than 10000: a replay sends the oldest 10000 and says where the rest starts."`
}

// CountReplay counts what Replay(w) would send again, changing nothing.
func (s Store) CountReplay(ctx context.Context, w ReplayWindow) (ReplayCount, error) {
	out := ReplayCount{EndpointID: w.EndpointID}
	if err := w.check(); err != nil {
		return out, err
	}
	var tenant *string
	if w.TenantID != "" {
		tenant = &w.TenantID
	}
	err := pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, replayEndpointSQL, w.EndpointID, tenant).Scan(&out.TenantID); err != nil {
			return err
		}
		return tx.QueryRow(ctx, deliveryReplayCountSQL, w.EndpointID, w.Since, w.Until, MaxReplay).Scan(&out.Replayable)
	})
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return out, refusal.NoSuch("endpoint", w.EndpointID)
	case err != nil:
		return out, fmt.Errorf("count the replay of endpoint %s: %w", w.EndpointID, err)
	}
	if out.Replayable > MaxReplay {
		out.Replayable, out.More = MaxReplay, true
	}
	return out, nil
}

func (w ReplayWindow) check() error {
	horizon := w.Horizon
	if horizon <= 0 {
		horizon = DefaultPayloadHorizon
	}
	switch {
	case !canonical(w.EndpointID):
		return refusal.InvalidField("endpoint_id", "must be a canonical uuid (lowercase, 8-4-4-4-12)")
	case w.Since.IsZero():
		return refusal.InvalidField("since", "is required: the start of the window (RFC 3339)")
	case w.Until.IsZero():
		return refusal.InvalidField("until", "is required: the end of the window (RFC 3339)")
	case !w.Since.Before(w.Until):
		return refusal.InvalidField("until", "must be after since")
	case w.Until.Sub(w.Since) > horizon:
		return refusal.InvalidField("until", "the window is longer than the payload horizon (%s): nothing older is kept", horizon)
	}
	return nil
}
