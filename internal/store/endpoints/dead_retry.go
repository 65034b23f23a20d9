package endpoints

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sluicehq/sluice/internal/audit"
	"github.com/sluicehq/sluice/internal/egress"
	"github.com/sluicehq/sluice/internal/refusal"
)

var (
	//go:embed sql/dead_retry.sql
	deadRetrySQL string
	//go:embed sql/dead_retry_count.sql
	deadRetryCountSQL string
)

// ErrorClasses are the classes of a failed attempt (Attempt.ErrorClass):
// "status" (the endpoint answered, not 2xx), "request" (no request could be
// made of it: an unusable URL, a body no longer kept), "transformation"
// (the endpoint's transformation failed over the event) and the egress
// client's.
var ErrorClasses = []string{"status", "request", egress.ClassRefusedAddress, egress.ClassDNS, egress.ClassConnect,
	egress.ClassTimeout, egress.ClassTLS, egress.ClassReset, egress.ClassCanceled, ErrorClassTransformation, egress.ClassOther}

// DeadSelection selects an endpoint's dead deliveries to retry: created in
// the window, of the event types EventType matches (a filter: "*", a type
// or a prefix ending in ".*"; empty: any), whose last failed attempt's
// class is ErrorClass (empty: any).
type DeadSelection struct {
	ReplayWindow
	EventType  string
	ErrorClass string
}

// DeadCount is a bulk retry's dry run.
type DeadCount struct {
	EndpointID string `json:"endpoint_id"`
	TenantID   string `json:"tenant_id"`
	Retryable  int64  `json:"retryable" doc:"Dead deliveries the selection holds, that a retry would send again now (at most 10000: one retry's cap)."`
	More       bool   `json:"more" doc:"The selection holds more than 10000: a retry sends the oldest 10000 and says where the rest starts."`
}

// DeadRetried is what a bulk retry did.
type DeadRetried struct {
	EndpointID string `json:"endpoint_id"`
	TenantID   string `json:"tenant_id"`
	Retried    int64  `json:"retried" doc:"Dead deliveries moved back to pending, due now."`
	// NextSince is set when the selection held more than MaxReplay.
	NextSince *time.Time `json:"next_since,omitempty" doc:"Set when the selection held more than 10000: retry again with this since (same until and filters) for the rest."`
}

// args are the statements' $4.. arguments but the limit: the exact type,
// the prefix, the class (each NULL when not asked for).
func (sel DeadSelection) args() (exact, prefix, class *string, err error) {
	if err := sel.check(); err != nil {
		return nil, nil, nil, err
	}
	switch t := sel.EventType; {
	case t == "" || t == "*":
	case CheckFilter(t) != nil:
		return nil, nil, nil, refusal.InvalidField("event_type", "%s", CheckFilter(t).Error())
	case strings.HasSuffix(t, ".*"):
		p := strings.TrimSuffix(t, "*")
		prefix = &p
	default:
		exact = &t
	}
	if sel.ErrorClass != "" {
		if !slices.Contains(ErrorClasses, sel.ErrorClass) {
			return nil, nil, nil, refusal.InvalidField("error_class", "must be one of %s", strings.Join(ErrorClasses, ", "))
		}
		class = &sel.ErrorClass
	}
	return exact, prefix, class, nil
}

// CountDead counts what RetryDead(sel) would send again, changing
// nothing; checked and confined as RetryDead is.
func (s Store) CountDead(ctx context.Context, sel DeadSelection) (DeadCount, error) {
	out := DeadCount{EndpointID: sel.EndpointID}
	exact, prefix, class, err := sel.args()
	if err != nil {
		return out, err
	}
	err = pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, replayEndpointSQL, sel.EndpointID, sel.tenant()).Scan(&out.TenantID); err != nil {
			return err
		}
		return tx.QueryRow(ctx, deadRetryCountSQL, sel.EndpointID, sel.Since, sel.Until, MaxReplay, exact, prefix, class).Scan(&out.Retryable)
	})
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return out, refusal.NoSuch("endpoint", sel.EndpointID)
	case err != nil:
		return out, fmt.Errorf("count the dead deliveries of endpoint %s: %w", sel.EndpointID, err)
	}
	if out.Retryable > MaxReplay {
		out.Retryable, out.More = MaxReplay, true
	}
	return out, nil
}

// RetryDead sends the dead deliveries sel selects again, oldest first, at
// most MaxReplay per call: each becomes pending, due now, with its
// webhook-id, and on an ordered endpoint goes before the later pending
// deliveries of its key, as its id says. Audited (endpoint.retry_dead),
// in the retry's transaction.
func (s Store) RetryDead(ctx context.Context, sel DeadSelection) (DeadRetried, error) {
	out := DeadRetried{EndpointID: sel.EndpointID}
	exact, prefix, class, err := sel.args()
	if err != nil {
		return out, err
	}
	err = pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, replayEndpointSQL, sel.EndpointID, sel.tenant()).Scan(&out.TenantID); err != nil {
			return err
		}
		var (
			last *time.Time
			told *int64
		)
		if err := tx.QueryRow(ctx, deadRetrySQL, sel.EndpointID, sel.Since, sel.Until, MaxReplay, exact, prefix, class).Scan(&out.Retried, &last, &told); err != nil {
			return err
		}
		if out.Retried == MaxReplay && last != nil {
			out.NextSince = last
		}
		return s.Actor.Record(ctx, tx, audit.Target{Action: "endpoint.retry_dead", Resource: "endpoint", ID: sel.EndpointID, TenantID: out.TenantID})
	})
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return out, refusal.NoSuch("endpoint", sel.EndpointID)
	case err != nil:
		return out, fmt.Errorf("retry the dead deliveries of endpoint %s: %w", sel.EndpointID, err)
	}
	return out, nil
}

// tenant is the window's tenant as the statements take it (NULL: any).
func (w ReplayWindow) tenant() *string {
	if w.TenantID == "" {
		return nil
	}
	return &w.TenantID
}
