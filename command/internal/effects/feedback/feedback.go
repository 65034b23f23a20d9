// Package feedback raises alerts about feedback left on a project (Standard
// Webhooks feedback.created and feedback.escalated events).
//
// Invariant: one initial alert per feedback (business key: source, account,
// project, feedback id, "initial-alert"), however many events announce it;
// an escalation is its own operation ("escalation-<level>", level 1 when the
// event names none), raised once per level. Each alert is an intent written
// to the notifications topic through the outbox, in the same transaction as
// its row, for the dispatcher to deliver.
package feedback

import (
	"context"
	_ "embed"
	"fmt"
	"strconv"

	"github.com/sluicehq/sluice/effect"
)

var (
	//go:embed sql/alert.sql
	alertSQL string
	//go:embed sql/trail.sql
	trailSQL string
	//go:embed sql/erase.sql
	eraseSQL string
)

// InitialAlert is the business-key operation of a feedback's first alert.
const InitialAlert = "initial-alert"

// Group raises feedback alerts.
func Group() effect.Group {
	return effect.Group{
		Name:    "feedback",
		Types:   []string{"standard_webhooks.feedback.created", "standard_webhooks.feedback.escalated"},
		Handler: effect.Each(apply),
		Tables:  []string{"feedback_alerts"}, Trail: trailSQL, Erase: eraseSQL,
	}
}

type feedbackEvent struct {
	Data struct {
		ID        string `json:"id"`
		ProjectID string `json:"project_id"`
		Level     int    `json:"level"`
	} `json:"data"`
}

// Alert is the intent the dispatcher delivers.
type Alert struct {
	Kind           string `json:"kind"`
	IdempotencyKey string `json:"idempotency_key"`
	TenantID       string `json:"tenant_id"`
	ProjectID      string `json:"project_id"`
	FeedbackID     string `json:"feedback_id"`
	Operation      string `json:"operation"`
}

// apply raises the record's alert once per business key, its intent with
// it.
func apply(ctx context.Context, tx *effect.Tx, rec effect.Event[feedbackEvent]) error {
	fb := rec.Payload.Data
	if fb.ID == "" || fb.ProjectID == "" {
		return effect.Permanentf("%s: no feedback or project id", rec.Type)
	}
	operation := InitialAlert
	if rec.Type == "standard_webhooks.feedback.escalated" {
		operation = "escalation-" + strconv.Itoa(max(fb.Level, 1))
	}
	var inbox *int64
	if rec.InboxID != 0 {
		inbox = &rec.InboxID
	}
	made, err := effect.Once(ctx, tx, alertSQL, rec.TenantID, rec.SourceID, rec.SourceAccount, fb.ProjectID, fb.ID, operation,
		rec.ID, inbox, rec.Topic, rec.Partition, rec.Offset)
	if err != nil || !made {
		if err != nil {
			return fmt.Errorf("alert feedback %s: %w", fb.ID, err)
		}
		return nil
	}
	key := rec.BusinessKey(fb.ProjectID+"/"+fb.ID, operation)
	tx.Emit(ctx, rec.Record, effect.Intent{Type: "sluice.alert.feedback", Key: key, ObjectType: "feedback", Subject: fb.ID,
		Payload: Alert{Kind: "feedback-" + operation, IdempotencyKey: key, TenantID: rec.TenantID, ProjectID: fb.ProjectID,
			FeedbackID: fb.ID, Operation: operation}})
	return nil
}
