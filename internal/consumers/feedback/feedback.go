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

	"github.com/jackc/pgx/v5"

	"github.com/sluicehq/sluice/internal/consumers"
	"github.com/sluicehq/sluice/internal/envelope"
)

//go:embed sql/alert.sql
var alertSQL string

// Topic is the suffix of the topic this handler consumes.
const Topic = "feedback"

// InitialAlert is the business-key operation of a feedback's first alert.
const InitialAlert = "initial-alert"

// Handler applies feedback events.
type Handler struct {
	consumers.Local
	// Topics names the notifications topic for alert intents.
	Topics envelope.Topics
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

// Begin implements consumers.Handler: records share no state.
func (h Handler) Begin(tx pgx.Tx) consumers.Batch { return consumers.EachRecord(tx, h.apply) }

// apply applies one record.
func (h Handler) apply(ctx context.Context, tx pgx.Tx, rec consumers.Record) error {
	ev := rec.Event
	var operation string
	switch ev.Type {
	case "standard_webhooks.feedback.created":
		operation = InitialAlert
	case "standard_webhooks.feedback.escalated":
	default:
		return nil
	}
	var e feedbackEvent
	if err := rec.Decode(ctx, tx, &e); err != nil {
		return err
	}
	fb := e.Data
	if fb.ID == "" || fb.ProjectID == "" {
		return consumers.Permanentf("%s: no feedback or project id", ev.Type)
	}
	if operation == "" {
		operation = "escalation-" + strconv.Itoa(max(fb.Level, 1))
	}
	key := rec.BusinessKey(fb.ProjectID+"/"+fb.ID, operation)
	intent := consumers.NewIntent(ctx, h.Topics.Resource("notifications"), rec, "sluice.alert.feedback", key, "feedback", fb.ID,
		Alert{Kind: "feedback-" + operation, IdempotencyKey: key, TenantID: ev.TenantID, ProjectID: fb.ProjectID,
			FeedbackID: fb.ID, Operation: operation})
	_, err := tx.Exec(ctx, alertSQL, ev.TenantID, ev.SourceID, ev.SourceAccount, fb.ProjectID, fb.ID, operation,
		ev.ID, rec.InboxID(), intent.Topic, intent.Key, intent.Headers, intent.Payload, rec.Topic, rec.Partition, rec.Offset)
	if err != nil {
		return fmt.Errorf("alert feedback %s: %w", fb.ID, err)
	}
	return nil
}
