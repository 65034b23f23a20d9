// Package credits grants credits for paid invoices: each eligible invoice
// grants a fixed amount to the workspace its customer maps to, once, whatever
// the number of events that mention it (business key: source, account,
// invoice id, "initial-credit-grant"). A confirmation e-mail intent is written
// to the outbox in the same transaction, so it exists exactly when the grant
// does.
package credits

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"

	"github.com/sluicehq/sluice/consumers"
	"github.com/sluicehq/sluice/internal/envelope"
)

var (
	//go:embed sql/grant.sql
	grantSQL string
	//go:embed sql/workspace.sql
	workspaceSQL string
	//go:embed sql/claim.sql
	claimSQL string
)

// Operation is the business-key operation of the first grant per invoice.
const Operation = "initial-credit-grant"

// ErrNoWorkspace: the invoice's customer maps to no workspace of the tenant.
var ErrNoWorkspace = errors.New("credits: customer maps to no workspace")

// Handler applies invoice events.
type Handler struct {
	// Credits granted per eligible invoice. Default 100.
	Credits int64
	// Topics names the notifications topic for e-mail intents.
	Topics envelope.Topics
}

// Topic is the suffix of the topic this handler consumes.
const Topic = "invoices"

// NotificationsTopic is the suffix of the topic e-mail intents go to.
const NotificationsTopic = "notifications"

type invoicePaid struct {
	Data struct {
		Object struct {
			ID         string `json:"id"`
			Customer   string `json:"customer"`
			AmountPaid int64  `json:"amount_paid"`
			Status     string `json:"status"`
		} `json:"object"`
	} `json:"data"`
}

// EmailIntent is the second-hop message: a dispatcher sends it with
// IdempotencyKey so a retried send is not a second e-mail.
type EmailIntent struct {
	Kind           string `json:"kind"`
	IdempotencyKey string `json:"idempotency_key"`
	TenantID       string `json:"tenant_id"`
	WorkspaceID    string `json:"workspace_id"`
	Credits        int64  `json:"credits"`
	InvoiceID      string `json:"invoice_id"`
}

// Apply implements consumers.Handler.
func (h Handler) Apply(ctx context.Context, tx pgx.Tx, rec consumers.Record) error {
	ev := rec.Event
	if ev.Type != "stripe.invoice.paid" {
		return nil // other invoice events have no credit effect (yet)
	}
	body := rec.Value
	if ev.Claim != "" {
		inboxID, err := strconv.ParseInt(ev.InboxID, 10, 64)
		if err != nil {
			return consumers.Permanentf("claim without inbox id: %q", ev.InboxID)
		}
		if err := tx.QueryRow(ctx, claimSQL, inboxID, ev.TenantID).Scan(&body); err != nil {
			return fmt.Errorf("load claimed body %d: %w", inboxID, err)
		}
	}
	var inv invoicePaid
	if err := json.Unmarshal(body, &inv); err != nil {
		return consumers.Permanentf("invoice.paid body: %w", err)
	}
	obj := inv.Data.Object
	if obj.Status != "paid" || obj.AmountPaid <= 0 || obj.Customer == "" {
		return nil // not eligible: nothing to grant
	}
	var workspaceID string
	err := tx.QueryRow(ctx, workspaceSQL, ev.TenantID, obj.Customer).Scan(&workspaceID)
	if errors.Is(err, pgx.ErrNoRows) {
		return consumers.Permanent(fmt.Errorf("%w: customer %s", ErrNoWorkspace, obj.Customer))
	}
	if err != nil {
		return fmt.Errorf("find workspace: %w", err)
	}

	credits := h.Credits
	if credits <= 0 {
		credits = 100
	}
	businessKey := ev.SourceID + "/" + ev.SourceAccount + "/" + obj.ID + "/" + Operation
	intent := EmailIntent{
		Kind: "credits-granted", IdempotencyKey: businessKey + "/confirmation-email",
		TenantID: ev.TenantID, WorkspaceID: workspaceID, Credits: credits, InvoiceID: obj.ID,
	}
	payload, _ := json.Marshal(intent)
	key := envelope.Key(ev.TenantID, "workspace", workspaceID)
	headers, _ := json.Marshal(envelope.Event{
		ID: intent.IdempotencyKey, Source: envelope.SourceURI(ev.TenantID, ev.SourceID), Type: "sluice.email.credits_granted",
		Subject: workspaceID, TenantID: ev.TenantID, SourceAccount: ev.SourceAccount, PartitionKey: key,
		ContentType: "application/json", TraceParent: ev.TraceParent,
	}.Headers())
	var inboxID *int64
	if id, err := strconv.ParseInt(ev.InboxID, 10, 64); err == nil {
		inboxID = &id
	}
	_, err = tx.Exec(ctx, grantSQL, ev.TenantID, workspaceID, ev.SourceID, ev.SourceAccount, obj.ID, Operation,
		credits, ev.ID, inboxID, h.Topics.Resource(NotificationsTopic), []byte(key), headers, payload)
	if err != nil {
		return fmt.Errorf("grant credits: %w", err)
	}
	return nil
}
