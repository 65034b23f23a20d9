// Package subscriptions projects Stripe subscription state from
// customer.subscription.created, .updated and .deleted events.
//
// Invariant: the stored state is the one of the greatest version seen, so
// any arrival order of the same events ends in the same row. A version is
// (the event's created time, the order Sluice accepted it): Stripe's created
// has one-second resolution, and of two events of the same second the one
// accepted later (greater inbox id, carried by the record, the same on every
// replay) wins; the random event ids said nothing about order. canceled and
// incomplete_expired are final: they outrank any non-final state and never
// change again. The ordering lives in SQL (sluice_supersedes_accepted).
package subscriptions

import (
	"context"
	_ "embed"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sluicehq/sluice/internal/consumers"
)

//go:embed sql/project.sql
var projectSQL string

// Topic is the suffix of the topic this handler consumes.
const Topic = "subscriptions"

// Handler applies subscription events.
type Handler struct{ consumers.Local }

type subscriptionEvent struct {
	Created int64 `json:"created"`
	Data    struct {
		Object struct {
			ID       string `json:"id"`
			Customer string `json:"customer"`
			Status   string `json:"status"`
		} `json:"object"`
	} `json:"data"`
}

// final reports whether Stripe never moves a subscription out of status.
func final(status string) bool { return status == "canceled" || status == "incomplete_expired" }

// Begin implements consumers.Handler: records share no state.
func (h Handler) Begin(tx pgx.Tx) consumers.Batch { return consumers.EachRecord(tx, h.apply) }

// apply applies one record.
func (Handler) apply(ctx context.Context, tx pgx.Tx, rec consumers.Record) error {
	ev := rec.Event
	switch ev.Type {
	case "stripe.customer.subscription.created", "stripe.customer.subscription.updated", "stripe.customer.subscription.deleted":
	default:
		return nil
	}
	var e subscriptionEvent
	if err := rec.Decode(ctx, tx, &e); err != nil {
		return err
	}
	sub := e.Data.Object
	if sub.ID == "" || e.Created <= 0 {
		return consumers.Permanentf("%s: no subscription id or created time", ev.Type)
	}
	status := sub.Status
	if ev.Type == "stripe.customer.subscription.deleted" {
		status = "canceled" // a deleted subscription is over, whatever else the body says
	}
	if status == "" {
		return consumers.Permanentf("%s: subscription %s has no status", ev.Type, sub.ID)
	}
	_, err := tx.Exec(ctx, projectSQL, ev.SourceID, ev.SourceAccount, sub.ID, ev.TenantID, sub.Customer, status,
		final(status), time.Unix(e.Created, 0).UTC(), ev.ID, rec.InboxID(), rec.Topic, rec.Partition, rec.Offset)
	if err != nil {
		return fmt.Errorf("project subscription %s: %w", sub.ID, err)
	}
	return nil
}
