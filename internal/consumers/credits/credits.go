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
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicehq/sluice/internal/consumers"
	"github.com/sluicehq/sluice/internal/envelope"
	"github.com/sluicehq/sluice/internal/pg"
)

var (
	//go:embed sql/grant_of.sql
	grantOfSQL string
	//go:embed sql/reverse.sql
	reverseSQL string
	//go:embed sql/settle.sql
	settleSQL string
)

// Operation is the business-key operation of the first grant per invoice.
const Operation = "initial-credit-grant"

// RefundOperation is the business-key operation of an invoice's refund.
const RefundOperation = "refund"

// ErrNoWorkspace: the invoice's customer maps to no workspace of the tenant.
var ErrNoWorkspace = errors.New("credits: customer maps to no workspace")

// Handler applies invoice events, set-based: see batch.Apply.
type Handler struct {
	consumers.Local
	// Credits granted per eligible invoice. Default 100.
	Credits int64
	// Topics names the notifications topic for e-mail intents.
	Topics envelope.Topics
	// Locks, when set, lets a batch set aside the records of a workspace
	// whose balance row is locked elsewhere (see Locks); nil: such a
	// batch waits for the row in place, holding its partition.
	Locks *Locks
	// Buffers, when set, keeps the statements' parameter buffers between
	// batches (see Buffers); nil: each batch makes its own.
	Buffers *Buffers
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

// reverse applies a refund, an effect of its own.
func (b *batch) reverse(ctx context.Context, rec consumers.Record) (err error) {
	ctx, span := rec.StartEffect(ctx, "credits reverse", time.Time{})
	defer func() { consumers.EndSpan(span, err) }()
	tx := b.tx
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
	err = tx.QueryRow(ctx, grantOfSQL, ev.SourceID, ev.SourceAccount, invoiceID, Operation).Scan(&grantID, &workspaceID, &credits)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("find grant: %w", err)
	}
	var intent consumers.Intent
	if workspaceID != nil {
		intent = b.h.email(ctx, rec, "credits-reversed", rec.BusinessKey(invoiceID, RefundOperation), *workspaceID, credits, invoiceID)
	}
	rows, err := tx.Query(ctx, reverseSQL, ev.TenantID, ev.SourceID, ev.SourceAccount, invoiceID, RefundOperation,
		grantID, workspaceID, credits, ev.ID, rec.InboxID(), intent.Topic, intent.Key, intent.Headers, intent.Payload,
		rec.Topic, rec.Partition, rec.Offset)
	if err != nil {
		return fmt.Errorf("reverse credits: %w", err)
	}
	return b.collectDeltas(rec, rows, -1)
}

// delta is a batch's net balance change for one workspace, and the records
// that make it: they wait together if the balance row is locked elsewhere.
type delta struct {
	tenantID string
	credits  int64
	recs     []*kgo.Record
}

// collectDeltas adds what rec's reversal (sign -1) returned, if anything,
// to the batch's balance changes.
func (b *batch) collectDeltas(rec consumers.Record, rows pgx.Rows, sign int64) error {
	var workspaceID string
	var credits int64
	_, err := pgx.ForEachRow(rows, []any{&workspaceID, &credits}, func() error {
		addDelta(b.deltas, rec, workspaceID, sign*credits)
		return nil
	})
	if err != nil {
		return fmt.Errorf("credits effect: %w", err)
	}
	return nil
}

func addDelta(deltas map[string]*delta, rec consumers.Record, workspaceID string, credits int64) {
	d := deltas[workspaceID]
	if d == nil {
		d = &delta{tenantID: rec.Event.TenantID}
		deltas[workspaceID] = d
	}
	d.credits += credits
	d.recs = append(d.recs, rec.Record)
}

// Settle implements consumers.Batch: the e-mails of the batch's grants not
// written yet and its balance changes, in workspace order, in one round
// trip.
func (b *batch) Settle(ctx context.Context) error {
	if len(b.intents) == 0 && len(b.deltas) == 0 {
		b.h.Buffers.put(b.params)
		b.params = nil
		return nil
	}
	var q pgconn.Batch
	if err := consumers.QueueIntents(ctx, b.tx, &q, &b.params[0], b.takeIntents()); err != nil {
		return err
	}
	workspaces := slices.Sorted(maps.Keys(b.deltas))
	if err := b.locked(ctx, workspaces); err != nil {
		return err
	}
	if len(b.deltas) > 0 {
		tenants := make([]string, len(workspaces))
		amounts := make([]int64, len(workspaces))
		for i, w := range workspaces {
			tenants[i], amounts[i] = b.deltas[w].tenantID, b.deltas[w].credits
		}
		p := &b.params[1]
		p.Reset()
		if err := p.UUID(workspaces); err != nil {
			return fmt.Errorf("move balances: %w", err)
		}
		if err := p.UUID(tenants); err != nil {
			return fmt.Errorf("move balances: %w", err)
		}
		p.Int8(amounts)
		if err := pg.QueuePrepared(ctx, b.tx, &q, "sluice_credits_settle", settleSQL, p); err != nil {
			return fmt.Errorf("move balances: %w", err)
		}
	}
	if err := b.tx.Conn().PgConn().ExecBatch(ctx, &q).Close(); err != nil {
		if consumers.WaitedForLock(err) {
			b.h.Locks.suspect(workspaces) // the next attempt asks which
		}
		return fmt.Errorf("write e-mails and move balances: %w", err)
	}
	// Every statement was sent and answered: nothing reads the buffers.
	b.h.Buffers.put(b.params)
	b.params = nil
	return nil
}

// locked fails the batch, naming the records that wait (consumers.Blocked),
// when a workspace it moves was suspected of being locked elsewhere and
// still is; a suspect found free is forgotten.
func (b *batch) locked(ctx context.Context, workspaces []string) error {
	suspects := b.h.Locks.among(workspaces)
	if len(suspects) == 0 {
		return nil
	}
	locked, err := probe(ctx, b.tx, suspects)
	if err != nil {
		return err
	}
	b.h.Locks.forget(slices.DeleteFunc(suspects, func(w string) bool { return slices.Contains(locked, w) }))
	if len(locked) == 0 {
		return nil
	}
	b.h.Locks.suspect(locked)
	var recs []*kgo.Record
	for _, w := range locked {
		recs = append(recs, b.deltas[w].recs...)
	}
	return consumers.Blocked(fmt.Errorf("balance of workspace %s locked by another transaction", strings.Join(locked, ", ")), recs...)
}

func (h Handler) email(ctx context.Context, rec consumers.Record, kind, businessKey, workspaceID string, credits int64, invoiceID string) consumers.Intent {
	key := businessKey + "/confirmation-email"
	return consumers.NewIntent(ctx, h.Topics.Resource(NotificationsTopic), rec, "sluice.email."+strings.ReplaceAll(kind, "-", "_"), key, "workspace", workspaceID,
		EmailIntent{Kind: kind, IdempotencyKey: key, TenantID: rec.Event.TenantID, WorkspaceID: workspaceID, Credits: credits, InvoiceID: invoiceID})
}
