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

	"github.com/sluicehq/sluice/effect"
)

var (
	//go:embed sql/project.sql
	projectSQL string
	//go:embed sql/trail.sql
	trailSQL string
	//go:embed sql/erase.sql
	eraseSQL string
)

// Group projects subscriptions.
func Group() effect.Group {
	return effect.Group{
		Name: "subscriptions",
		Types: []string{"stripe.customer.subscription.created", "stripe.customer.subscription.updated",
			"stripe.customer.subscription.deleted"},
		Handler: effect.Each(apply),
		Tables:  []string{"subscriptions"}, Trail: trailSQL, Erase: eraseSQL,
	}
}

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

// apply applies one record.
func apply(ctx context.Context, tx *effect.Tx, rec effect.Event[subscriptionEvent]) error {
	e := rec.Payload
	sub := e.Data.Object
	if sub.ID == "" || e.Created <= 0 {
		return effect.Permanentf("%s: no subscription id or created time", rec.Type)
	}
	status := sub.Status
	if rec.Type == "stripe.customer.subscription.deleted" {
		status = "canceled" // a deleted subscription is over, whatever else the body says
	}
	if status == "" {
		return effect.Permanentf("%s: subscription %s has no status", rec.Type, sub.ID)
	}
	_, err := effect.Project(ctx, tx, projectSQL, rec.SourceID, rec.SourceAccount, sub.ID, rec.TenantID, sub.Customer, status,
		final(status), time.Unix(e.Created, 0).UTC(), rec.ID, inboxID(rec.Record), rec.Topic, rec.Partition, rec.Offset)
	if err != nil {
		return fmt.Errorf("project subscription %s: %w", sub.ID, err)
	}
	return nil
}

// inboxID is the record's processing id as a nullable column value.
func inboxID(r effect.Record) *int64 {
	if r.InboxID == 0 {
		return nil
	}
	return &r.InboxID
}
