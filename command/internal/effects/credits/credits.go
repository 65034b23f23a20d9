// Package credits grants credits for paid invoices and takes them back on
// refund. Each eligible invoice grants a fixed amount to the workspace its
// customer maps to, once, whatever the number of events that mention it
// (business key: source, account, invoice id, "initial-credit-grant"). A
// refund is its own operation (business key: ..., invoice id, "refund"):
// the first one reverses the whole grant, later ones change nothing, and an
// invoice refunded before its grant arrived is never granted. A refund's
// invoice is the record's subject (ingest resolves it for API versions whose
// charges name none), so the body's own invoice field is only a fallback.
// Each effect emits its e-mail intent in the same transaction, so the
// intent exists exactly when the effect does; balances are a Counter,
// moved by a batch's net amounts in workspace order when it settles.
//
// It is written on the public effect API alone, set-based: a run of
// invoices between two refunds is granted with three statements whatever
// its length.
package credits

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"

	"github.com/sluicehq/sluice/effect"
)

var (
	//go:embed sql/grant_of.sql
	grantOfSQL string
	//go:embed sql/reverse.sql
	reverseSQL string
	//go:embed sql/settle.sql
	settleSQL string
	//go:embed sql/probe.sql
	probeSQL string
	//go:embed sql/trail.sql
	trailSQL string
	//go:embed sql/erase.sql
	eraseSQL string
)

// Operation is the business-key operation of the first grant per invoice.
const Operation = "initial-credit-grant"

// RefundOperation is the business-key operation of an invoice's refund.
const RefundOperation = "refund"

// ErrNoWorkspace: the invoice's customer maps to no workspace of the tenant.
var ErrNoWorkspace = errors.New("credits: customer maps to no workspace")

// The event types with a credit effect.
const (
	typePaid     = "stripe.invoice.paid"
	typeRefunded = "stripe.charge.refunded"
)

// Group grants credits: 100 per eligible invoice.
func Group() effect.Group {
	return effect.Group{Name: "credits", Types: []string{typePaid, typeRefunded}, Handler: New(100),
		Tables: []string{"credit_grants", "credit_reversals", "balances"}, Trail: trailSQL, Erase: eraseSQL}
}

// New is the handler granting credits per eligible invoice.
func New(credits int64) *Handler {
	return &Handler{credits: credits, balances: effect.NewCounter("credits_balances", settleSQL, probeSQL)}
}

// Handler applies invoice events, set-based: see batch.Apply.
type Handler struct {
	effect.Local
	credits  int64
	balances *effect.Counter
	// columns keeps the statements' parameters from one batch to the
	// next: a backlog's batch of thousands of records encodes megabytes
	// of them, and, made anew for every batch, they were a tenth of what
	// the consumers allocated there.
	columns sync.Pool
}

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

// paidInvoice decodes an invoice.paid record and says whether its invoice
// is eligible: paid, with an amount above zero, by a customer.
func paidInvoice(ctx context.Context, tx pgx.Tx, rec effect.Record) (invoiceObject, bool, error) {
	var inv invoicePaid
	if err := rec.Decode(ctx, tx, &inv); err != nil {
		return invoiceObject{}, false, err
	}
	obj := inv.Data.Object
	return obj, obj.Status == "paid" && obj.AmountPaid > 0 && obj.Customer != "", nil
}

// reverse applies a refund, an effect of its own.
func (b *batch) reverse(ctx context.Context, rec effect.Record) (err error) {
	ctx, end := rec.Trace(ctx, "credits reverse")
	defer func() { end(err) }()
	var ch chargeRefunded
	if err := rec.Decode(ctx, b.tx, &ch); err != nil {
		return err
	}
	// Ingest routes a refund to its invoice and names it as the subject:
	// from Stripe's basil API version on, the charge itself names none
	// (ingest found it through the payment's link).
	invoiceID := rec.Subject
	if invoiceID == "" {
		invoiceID = ch.Data.Object.Invoice
	}
	if invoiceID == "" {
		return effect.Permanentf("charge.refunded: charge %s names no invoice", ch.Data.Object.ID)
	}
	if ch.Data.Object.AmountRefunded <= 0 {
		return nil // nothing was refunded
	}
	var (
		grantID     *int64
		workspaceID *string
		credits     int64
	)
	err = b.tx.QueryRow(ctx, grantOfSQL, rec.SourceID, rec.SourceAccount, invoiceID, Operation).Scan(&grantID, &workspaceID, &credits)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("find grant: %w", err)
	}
	var reversed *string
	err = b.tx.QueryRow(ctx, reverseSQL, rec.TenantID, rec.SourceID, rec.SourceAccount, invoiceID, RefundOperation,
		grantID, workspaceID, credits, rec.ID, inboxID(rec), rec.Topic, rec.Partition, rec.Offset).Scan(&reversed)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return nil // refunded before, or before any grant (the row then stops a later one)
	case err != nil:
		return fmt.Errorf("reverse credits: %w", err)
	case reversed == nil:
		return nil // refunded before any grant: recorded, nothing to take back
	}
	b.tx.Add(b.h.balances, rec, *reversed, -credits)
	b.tx.Emit(ctx, rec, email(rec, "credits-reversed", rec.BusinessKey(invoiceID, RefundOperation), *reversed, credits, invoiceID))
	return nil
}

// email is the intent of an effect on a workspace's credits.
func email(rec effect.Record, kind, businessKey, workspaceID string, credits int64, invoiceID string) effect.Intent {
	key := businessKey + "/confirmation-email"
	return effect.Intent{Type: "sluice.email." + strings.ReplaceAll(kind, "-", "_"), Key: key, ObjectType: "workspace", Subject: workspaceID,
		Payload: EmailIntent{Kind: kind, IdempotencyKey: key, TenantID: rec.TenantID, WorkspaceID: workspaceID, Credits: credits, InvoiceID: invoiceID}}
}

// inboxID is the record's processing id as a nullable column value.
func inboxID(r effect.Record) *int64 {
	if r.InboxID == 0 {
		return nil
	}
	return &r.InboxID
}
