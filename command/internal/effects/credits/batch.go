package credits

import (
	"context"
	_ "embed"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/sluicehq/sluice/effect"
)

var (
	//go:embed sql/grant_batch.sql
	grantBatchSQL string
	//go:embed sql/workspaces.sql
	workspacesSQL string

	grantsStatement     = effect.Statement{Name: "sluice_credits_grants", SQL: grantBatchSQL}
	workspacesStatement = effect.Statement{Name: "sluice_credits_workspaces", SQL: workspacesSQL}
)

// columnsKept: parameters that grew past this (a batch of large bodies)
// are not kept, so what a group holds between batches stays its budget's.
const columnsKept = 8 << 20

// Begin implements effect.Handler.
func (h *Handler) Begin(tx *effect.Tx) effect.Batch {
	cols, _ := h.columns.Get().(*effect.Columns)
	if cols == nil {
		cols = &effect.Columns{}
	}
	return &batch{h: h, tx: tx, workspaces: map[[2]string]string{}, cols: cols}
}

// batch is one transaction attempt: what it learned of workspaces, and the
// parameters of its statements.
type batch struct {
	h  *Handler
	tx *effect.Tx
	// workspaces caches workspaces by (tenant, customer): a backlog holds
	// many invoices (and redeliveries) per customer.
	workspaces map[[2]string]string
	cols       *effect.Columns
}

// Apply implements effect.Batch. Each run of records between two refunds
// is granted with two statements whatever its length (the workspaces, the
// grants); a refund is applied alone, in its place, so the batch ends as
// if every record had been applied in order: a grant after a refund of the
// same invoice finds the refund and grants nothing. The e-mails and the
// balances are written when the batch settles, in the order emitted.
func (b *batch) Apply(ctx context.Context, recs []effect.Record) error {
	from := 0
	for i, rec := range recs {
		if rec.Type != typeRefunded {
			continue
		}
		if err := b.grantAll(ctx, recs[from:i], from); err != nil {
			return err
		}
		if err := b.reverse(ctx, rec); err != nil {
			return err
		}
		from = i + 1
	}
	return b.grantAll(ctx, recs[from:], from)
}

// Settle implements effect.Batch: the parameters go back for the next
// batch (the balances and e-mails are the effect runtime's to write).
func (b *batch) Settle(context.Context) error {
	b.cols.Trim(columnsKept)
	b.h.columns.Put(b.cols)
	b.cols = nil
	return nil
}

// pendingGrant is an eligible invoice of a run, asked for once.
type pendingGrant struct {
	rec       effect.Record
	at        int // its index among the records handed to Apply
	invoice   invoiceObject
	workspace string
}

// grantAll grants the eligible invoices among recs (records of other types
// change nothing), the first event of each invoice asking for it; recs
// begin at index from of Apply's records.
func (b *batch) grantAll(ctx context.Context, recs []effect.Record, from int) error {
	grants, err := eligible(ctx, b.tx, recs, from)
	if err != nil || len(grants) == 0 {
		return err
	}
	if err := b.workspacesOf(ctx, grants); err != nil {
		return err
	}
	made, err := b.insertGrants(ctx, grants)
	if err != nil {
		return err
	}
	// made is empty when all were granted before: a redelivery or a rewind.
	for _, ord := range made {
		g := grants[ord-1]
		b.tx.Add(b.h.balances, g.rec, g.workspace, b.h.credits)
		ectx, end := g.rec.Trace(ctx, "credits grant")
		b.tx.Emit(ectx, g.rec, email(g.rec, "credits-granted", g.rec.BusinessKey(g.invoice.ID, Operation), g.workspace, b.h.credits, g.invoice.ID))
		end(nil)
	}
	return nil
}

// eligible are the paid invoices among recs, each asked for by its first
// event of the run.
func eligible(ctx context.Context, tx *effect.Tx, recs []effect.Record, from int) ([]pendingGrant, error) {
	// Sized for a run of paid invoices, most of a backlog: grown from
	// nothing, the map moved every key at each of its doublings.
	grants := make([]pendingGrant, 0, len(recs))
	asked := make(map[[3]string]bool, len(recs))
	for i, rec := range recs {
		if rec.Type != typePaid {
			continue
		}
		obj, ok, err := paidInvoice(ctx, tx, rec)
		if err != nil {
			return nil, err
		}
		k := [3]string{rec.SourceID, rec.SourceAccount, obj.ID}
		if !ok || asked[k] {
			continue // not eligible, or a later event about an invoice already asked for
		}
		asked[k] = true
		grants = append(grants, pendingGrant{rec: rec, at: from + i, invoice: obj})
	}
	return grants, nil
}

// insertGrants inserts the grants in one prepared statement and returns
// the 1-based ordinals of those it made (a grant made before is none).
func (b *batch) insertGrants(ctx context.Context, grants []pendingGrant) ([]int64, error) {
	n := len(grants)
	tenants, workspaces, sources := make([]string, n), make([]string, n), make([]string, n)
	accounts, invoices, events, inboxIDs := make([]string, n), make([]string, n), make([]string, n), make([]*int64, n)
	topics, partitions, offsets := make([]string, n), make([]int32, n), make([]int64, n)
	for i, g := range grants {
		r := g.rec
		tenants[i], workspaces[i], sources[i] = r.TenantID, g.workspace, r.SourceID
		accounts[i], invoices[i], events[i], inboxIDs[i] = r.SourceAccount, g.invoice.ID, r.ID, inboxID(r)
		topics[i], partitions[i], offsets[i] = r.Topic, r.Partition, r.Offset
	}
	c := b.cols
	c.Reset()
	for _, ids := range [][]string{tenants, workspaces, sources} {
		if err := c.UUID(ids); err != nil {
			return nil, fmt.Errorf("grant credits: %w", err)
		}
	}
	c.Text(accounts)
	c.Text(invoices)
	c.Text(events)
	c.NullInt8(inboxIDs)
	c.TextScalar(RefundOperation)
	c.TextScalar(Operation)
	c.Int8Scalar(b.h.credits)
	c.Text(topics)
	c.Int4(partitions)
	c.Int8(offsets)
	rr, err := b.tx.Run(ctx, grantsStatement, c)
	if err != nil {
		return nil, fmt.Errorf("grant credits: %w", err)
	}
	made := make([]int64, 0, n)
	for rr.NextRow() {
		v := rr.Values()[0]
		if len(v) != 8 {
			rr.Close() //nolint:errcheck // the error below is the one to report
			return nil, errors.New("grant credits: malformed result row")
		}
		made = append(made, int64(binary.BigEndian.Uint64(v)))
	}
	if _, err := rr.Close(); err != nil {
		return nil, fmt.Errorf("grant credits: %w", err)
	}
	return made, nil
}

// workspacesOf fills in each grant's workspace: from the batch's cache, and
// for customers not seen yet in this batch, with one query for them all. A
// customer that maps to none is a permanent failure of its record.
func (b *batch) workspacesOf(ctx context.Context, grants []pendingGrant) error {
	known := b.workspaces
	var askTenants, askCustomers []string
	asked := make(map[[2]string]bool, len(grants))
	for _, g := range grants {
		k := [2]string{g.rec.TenantID, g.invoice.Customer}
		if _, ok := known[k]; ok || asked[k] {
			continue
		}
		asked[k] = true
		askTenants, askCustomers = append(askTenants, k[0]), append(askCustomers, k[1])
	}
	if len(askTenants) > 0 {
		if err := b.askWorkspaces(ctx, askTenants, askCustomers); err != nil {
			return err
		}
	}
	// Every customer mapped to no workspace is named at once: each record
	// is dead-lettered with its own reason, in one more attempt.
	var unmapped map[int]error
	for i := range grants {
		g := &grants[i]
		ws, ok := known[[2]string{g.rec.TenantID, g.invoice.Customer}]
		if !ok {
			if unmapped == nil {
				unmapped = map[int]error{}
			}
			unmapped[g.at] = effect.Permanent(fmt.Errorf("%w: customer %s", ErrNoWorkspace, g.invoice.Customer))
			continue
		}
		g.workspace = ws
	}
	return effect.RecordsFailed(unmapped)
}

// askWorkspaces reads the workspaces of (tenants[i], customers[i]) into
// the batch's cache, with one statement.
func (b *batch) askWorkspaces(ctx context.Context, tenants, customers []string) error {
	c := b.cols
	c.Reset()
	if err := c.UUID(tenants); err != nil {
		return fmt.Errorf("find workspaces: %w", err)
	}
	c.Text(customers)
	rr, err := b.tx.Run(ctx, workspacesStatement, c)
	if err != nil {
		return fmt.Errorf("find workspaces: %w", err)
	}
	for rr.NextRow() {
		v := rr.Values()
		ord := int64(-1)
		if len(v[0]) == 8 {
			ord = int64(binary.BigEndian.Uint64(v[0]))
		}
		if ord < 1 || ord > int64(len(tenants)) {
			rr.Close() //nolint:errcheck // the error below is the one to report
			return errors.New("find workspaces: malformed result row")
		}
		b.workspaces[[2]string{tenants[ord-1], customers[ord-1]}] = string(v[1])
	}
	if _, err := rr.Close(); err != nil {
		return fmt.Errorf("find workspaces: %w", err)
	}
	return nil
}
