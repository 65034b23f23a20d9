// Package verifications projects identity verification status (pending ->
// in_review -> approved | rejected) from Standard Webhooks verification.*
// events, ordered by the provider's timestamp, then, for ties, by the order
// Sluice accepted them (the inbox id the record carries, the same on every
// replay).
//
// Invariant: approved and rejected are terminal. A final status outranks any
// non-final one whatever its time: the provider retries deliveries for 24
// hours, and a late or re-sent "pending" carrying a newer timestamp must not
// reopen a decision. Between two final statuses the earlier stands. Any
// arrival order of the same events therefore ends in the same row.
package verifications

import (
	"context"
	_ "embed"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sluicehq/sluice/internal/consumers"
)

//go:embed sql/project.sql
var projectSQL string

// Topic is the suffix of the topic this handler consumes.
const Topic = "verifications"

// Handler applies verification events.
type Handler struct{ consumers.Local }

var final = map[string]bool{"pending": false, "in_review": false, "approved": true, "rejected": true}

type verificationEvent struct {
	Timestamp time.Time `json:"timestamp"`
	Data      struct {
		ID string `json:"id"`
	} `json:"data"`
}

// Begin implements consumers.Handler: records share no state.
func (h Handler) Begin(tx pgx.Tx) consumers.Batch { return consumers.EachRecord(tx, h.apply) }

// apply applies one record.
func (Handler) apply(ctx context.Context, tx pgx.Tx, rec consumers.Record) error {
	ev := rec.Event
	status, ok := strings.CutPrefix(ev.Type, "standard_webhooks.verification.")
	if !ok {
		return nil
	}
	isFinal, known := final[status]
	if !known {
		return consumers.Permanentf("unknown verification status %q", status)
	}
	var e verificationEvent
	if err := rec.Decode(ctx, tx, &e); err != nil {
		return err
	}
	if e.Data.ID == "" || e.Timestamp.IsZero() {
		return consumers.Permanentf("%s: no verification id or timestamp", ev.Type)
	}
	_, err := tx.Exec(ctx, projectSQL, ev.SourceID, ev.SourceAccount, e.Data.ID, ev.TenantID, status, isFinal,
		e.Timestamp.UTC(), ev.ID, rec.InboxID(), rec.Topic, rec.Partition, rec.Offset)
	if err != nil {
		return fmt.Errorf("project verification %s: %w", e.Data.ID, err)
	}
	return nil
}
