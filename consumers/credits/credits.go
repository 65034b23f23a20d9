// Package credits grants credits for paid invoices and takes them back on
// refund. Each eligible invoice grants a fixed amount to the workspace its
// customer maps to, once, whatever the number of events that mention it
// (business key: source, account, invoice id, "initial-credit-grant"). A
// refund is its own operation (business key: ..., invoice id, "refund"):
// the first one reverses the whole grant, later ones change nothing, and an
// invoice refunded before its grant arrived is never granted. A refund's
// invoice is the record's subject (ingest resolves it for API versions whose
// charges name none), so the body's own invoice field is only a fallback. Each effect
// writes its e-mail intent to the outbox in the same transaction, so the
// intent exists exactly when the effect does.
package credits

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/sluicehq/sluice/consumers"
	"github.com/sluicehq/sluice/internal/envelope"
)

var (
	//go:embed sql/grant.sql
	grantSQL string
	//go:embed sql/grant_of.sql
	grantOfSQL string
	//go:embed sql/reverse.sql
	reverseSQL string
	//go:embed sql/workspace.sql
	workspaceSQL string
	//go:embed sql/settle.sql
	settleSQL string
)

// Operation is the business-key operation of the first grant per invoice.
const Operation = "initial-credit-grant"

// RefundOperation is the business-key operation of an invoice's refund.
const RefundOperation = "refund"

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

// The event types with a credit effect.
const (
	typePaid     = "stripe.invoice.paid"
	typeRefunded = "stripe.charge.refunded"
)

type invoiceObject struct {
	ID         string `json:"id"`
	Customer   string `json:"customer"`
	AmountPaid int64  `json:"amount_paid"`
	Status     string `json:"status"`
}

type invoicePaid struct {
	Data struct {
		Object invoiceObject `json:"object"`
	} `json:"data"`
}

type chargeRefunded struct {
	Data struct {
		Object struct {
			ID             string `json:"id"`
			Invoice        string `json:"invoice"`
			AmountRefunded int64  `json:"amount_refunded"`
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
	switch rec.Event.Type {
	case typePaid:
		return h.grant(ctx, tx, rec)
	case typeRefunded:
		return h.reverse(ctx, tx, rec)
	}
	return nil // other invoice events have no credit effect (yet)
}

// paidInvoice decodes an invoice.paid record and says whether its invoice
// is eligible: paid, with an amount above zero, by a customer.
func paidInvoice(ctx context.Context, tx pgx.Tx, rec consumers.Record) (invoiceObject, bool, error) {
	var inv invoicePaid
	if err := rec.Decode(ctx, tx, &inv); err != nil {
		return invoiceObject{}, false, err
	}
	obj := inv.Data.Object
	return obj, obj.Status == "paid" && obj.AmountPaid > 0 && obj.Customer != "", nil
}

func (h Handler) credits() int64 {
	if h.Credits <= 0 {
		return 100
	}
	return h.Credits
}

func (h Handler) grant(ctx context.Context, tx pgx.Tx, rec consumers.Record) error {
	ev := rec.Event
	obj, eligible, err := paidInvoice(ctx, tx, rec)
	if err != nil || !eligible {
		return err // not eligible: nothing to grant
	}
	workspaceID, err := workspaceOf(ctx, tx, ev.TenantID, obj.Customer)
	if err != nil {
		return err
	}

	credits := h.credits()
	businessKey := rec.BusinessKey(obj.ID, Operation)
	intent := h.email(rec, "credits-granted", businessKey, workspaceID, credits, obj.ID)
	rows, err := tx.Query(ctx, grantSQL, ev.TenantID, workspaceID, ev.SourceID, ev.SourceAccount, obj.ID, Operation,
		credits, ev.ID, rec.InboxID(), intent.Topic, intent.Key, intent.Headers, intent.Payload, RefundOperation)
	if err != nil {
		return fmt.Errorf("grant credits: %w", err)
	}
	return collectDeltas(ctx, ev.TenantID, rows, 1)
}

func (h Handler) reverse(ctx context.Context, tx pgx.Tx, rec consumers.Record) error {
	ev := rec.Event
	var ch chargeRefunded
	if err := rec.Decode(ctx, tx, &ch); err != nil {
		return err
	}
	// Ingest routes a refund to its invoice and names it as the subject:
	// from Stripe's basil API version on, the charge itself names none
	// (ingest found it through the payment's link).
	invoiceID := ev.Subject
	if invoiceID == "" {
		invoiceID = ch.Data.Object.Invoice
	}
	if invoiceID == "" {
		return consumers.Permanentf("charge.refunded: charge %s names no invoice", ch.Data.Object.ID)
	}
	if ch.Data.Object.AmountRefunded <= 0 {
		return nil // nothing was refunded
	}
	var (
		grantID     *int64
		workspaceID *string
		credits     int64
	)
	err := tx.QueryRow(ctx, grantOfSQL, ev.SourceID, ev.SourceAccount, invoiceID, Operation).Scan(&grantID, &workspaceID, &credits)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("find grant: %w", err)
	}
	var intent consumers.Intent
	if workspaceID != nil {
		intent = h.email(rec, "credits-reversed", rec.BusinessKey(invoiceID, RefundOperation), *workspaceID, credits, invoiceID)
	}
	rows, err := tx.Query(ctx, reverseSQL, ev.TenantID, ev.SourceID, ev.SourceAccount, invoiceID, RefundOperation,
		grantID, workspaceID, credits, ev.ID, rec.InboxID(), intent.Topic, intent.Key, intent.Headers, intent.Payload)
	if err != nil {
		return fmt.Errorf("reverse credits: %w", err)
	}
	return collectDeltas(ctx, ev.TenantID, rows, -1)
}

type workspacesKey struct{}

// batchWorkspaces is the batch's cache of workspaces by (tenant, customer).
func batchWorkspaces(ctx context.Context) map[[2]string]string {
	return consumers.BatchValue(ctx, workspacesKey{}, func() map[[2]string]string { return map[[2]string]string{} })
}

// workspaceOf maps a customer to its workspace, once per batch per
// customer: a backlog holds many invoices (and redeliveries) per customer.
func workspaceOf(ctx context.Context, tx pgx.Tx, tenantID, customer string) (string, error) {
	known := batchWorkspaces(ctx)
	k := [2]string{tenantID, customer}
	if ws, ok := known[k]; ok {
		return ws, nil
	}
	var ws string
	err := tx.QueryRow(ctx, workspaceSQL, tenantID, customer).Scan(&ws)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", consumers.Permanent(fmt.Errorf("%w: customer %s", ErrNoWorkspace, customer))
	}
	if err != nil {
		return "", fmt.Errorf("find workspace: %w", err)
	}
	known[k] = ws
	return ws, nil
}

// delta is a batch's net balance change for one workspace.
type delta struct {
	tenantID string
	credits  int64
}

type deltasKey struct{}

func batchDeltas(ctx context.Context) map[string]*delta {
	return consumers.BatchValue(ctx, deltasKey{}, func() map[string]*delta { return map[string]*delta{} })
}

// collectDeltas adds what a grant (sign 1) or a reversal (sign -1)
// returned, if anything, to the batch's balance changes.
func collectDeltas(ctx context.Context, tenantID string, rows pgx.Rows, sign int64) error {
	deltas := batchDeltas(ctx)
	var workspaceID string
	var credits int64
	_, err := pgx.ForEachRow(rows, []any{&workspaceID, &credits}, func() error {
		addDelta(deltas, tenantID, workspaceID, sign*credits)
		return nil
	})
	if err != nil {
		return fmt.Errorf("credits effect: %w", err)
	}
	return nil
}

func addDelta(deltas map[string]*delta, tenantID, workspaceID string, credits int64) {
	d := deltas[workspaceID]
	if d == nil {
		d = &delta{tenantID: tenantID}
		deltas[workspaceID] = d
	}
	d.credits += credits
}

// Settle implements consumers.Settler: the e-mails of the batch's grants
// not written yet and its balance changes, in workspace order, in one round
// trip.
func (h Handler) Settle(ctx context.Context, tx pgx.Tx) error {
	b := &pgx.Batch{}
	consumers.QueueIntents(b, takeIntents(ctx))
	if deltas := batchDeltas(ctx); len(deltas) > 0 {
		workspaces := slices.Sorted(maps.Keys(deltas))
		tenants := make([]string, len(workspaces))
		amounts := make([]int64, len(workspaces))
		for i, w := range workspaces {
			tenants[i], amounts[i] = deltas[w].tenantID, deltas[w].credits
		}
		b.Queue(settleSQL, workspaces, tenants, amounts)
	}
	if b.Len() == 0 {
		return nil
	}
	if err := tx.SendBatch(ctx, b).Close(); err != nil {
		return fmt.Errorf("write e-mails and move balances: %w", err)
	}
	return nil
}

func (h Handler) email(rec consumers.Record, kind, businessKey, workspaceID string, credits int64, invoiceID string) consumers.Intent {
	key := businessKey + "/confirmation-email"
	return consumers.NewIntent(h.Topics.Resource(NotificationsTopic), rec, "sluice.email."+strings.ReplaceAll(kind, "-", "_"), key, "workspace", workspaceID,
		EmailIntent{Kind: kind, IdempotencyKey: key, TenantID: rec.Event.TenantID, WorkspaceID: workspaceID, Credits: credits, InvoiceID: invoiceID})
}
