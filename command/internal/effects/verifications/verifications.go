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

// Group projects verifications.
func Group() effect.Group {
	return effect.Group{Name: "verifications", Types: []string{"standard_webhooks.verification.*"}, Handler: effect.Each(apply),
		Tables: []string{"verifications"}, Trail: trailSQL, Erase: eraseSQL}
}

var final = map[string]bool{"pending": false, "in_review": false, "approved": true, "rejected": true}

type verificationEvent struct {
	Timestamp time.Time `json:"timestamp"`
	Data      struct {
		ID string `json:"id"`
	} `json:"data"`
}

// apply applies one record.
func apply(ctx context.Context, tx *effect.Tx, rec effect.Event[verificationEvent]) error {
	status := strings.TrimPrefix(rec.Type, "standard_webhooks.verification.")
	isFinal, known := final[status]
	if !known {
		return effect.Permanentf("unknown verification status %q", status)
	}
	e := rec.Payload
	if e.Data.ID == "" || e.Timestamp.IsZero() {
		return effect.Permanentf("%s: no verification id or timestamp", rec.Type)
	}
	var inbox *int64
	if rec.InboxID != 0 {
		inbox = &rec.InboxID
	}
	_, err := effect.Project(ctx, tx, projectSQL, rec.SourceID, rec.SourceAccount, e.Data.ID, rec.TenantID, status, isFinal,
		e.Timestamp.UTC(), rec.ID, inbox, rec.Topic, rec.Partition, rec.Offset)
	if err != nil {
		return fmt.Errorf("project verification %s: %w", e.Data.ID, err)
	}
	return nil
}
