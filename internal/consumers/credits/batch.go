package credits

import (
	"context"
	_ "embed"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sluicehq/sluice/internal/consumers"
	"github.com/sluicehq/sluice/internal/pg"
)

var (
	//go:embed sql/grant_batch.sql
	grantBatchSQL string
	//go:embed sql/workspaces.sql
	workspacesSQL string
)

// Begin implements consumers.Handler.
func (h Handler) Begin(tx pgx.Tx) consumers.Batch {
	return &batch{h: h, tx: tx, workspaces: map[[2]string]string{}, deltas: map[string]*delta{}, params: h.Buffers.get()}
}

// batch is one transaction attempt: what it learned and what it owes
// before COMMIT.
type batch struct {
	h  Handler
	tx pgx.Tx
	// workspaces caches workspaces by (tenant, customer): a backlog holds
	// many invoices (and redeliveries) per customer.
	workspaces map[[2]string]string
	deltas     map[string]*delta  // net balance changes by workspace
	intents    []consumers.Intent // e-mails of grants, not written yet
	// params encode the statements' parameters (pgx's encoding boxes every
	// array element); Settle sends two statements at once, hence two. Taken
	// from the handler's Buffers, given back when Settle is done.
	params *[2]pg.Params
}

// Apply implements consumers.Batch. Each run of records between two refunds
// is granted with three statements whatever its length (the workspaces, the
// grants, the e-mails of the new ones); a refund is applied alone, in its
// place, so the batch ends as if every record had been applied in order: a
// grant after a refund of the same invoice finds the refund and grants
// nothing. Records of other types change nothing.
func (b *batch) Apply(ctx context.Context, recs []consumers.Record) error {
	from := 0
	for i, rec := range recs {
		if rec.Event.Type != typeRefunded {
			continue
		}
		if err := b.grantAll(ctx, recs[from:i], from); err != nil {
			return err
		}
		// The grants' e-mails go out before the refund's, as they happened.
		if err := consumers.WriteIntents(ctx, b.tx, &b.params[0], b.takeIntents()); err != nil {
			return err
		}
		if err := b.reverse(ctx, rec); err != nil {
			return err
		}
		from = i + 1
	}
	return b.grantAll(ctx, recs[from:], from)
}

// pendingGrant is an eligible invoice of a run, asked for once.
type pendingGrant struct {
	rec       *consumers.Record
	at        int // its index among the records handed to Apply
	invoice   invoiceObject
	workspace string
}

// grantAll grants the eligible invoices among recs (records of other types
// change nothing), the first event of each invoice asking for it; recs
// begin at index from of Apply's records.
func (b *batch) grantAll(ctx context.Context, recs []consumers.Record, from int) error {
	grants, err := eligible(ctx, b.tx, recs, from)
	if err != nil || len(grants) == 0 {
		return err
	}
	if err := b.workspacesOf(ctx, grants); err != nil {
		return err
	}
	credits := b.h.credits()
	queried := time.Now()
	made, err := b.insertGrants(ctx, grants, credits)
	if err != nil {
		return err
	}
	// made is empty when all were granted before: a redelivery or a rewind.
	// The e-mails are written when the batch settles, with the balances,
	// in one round trip.
	for _, ord := range made {
		g := grants[ord-1]
		addDelta(b.deltas, *g.rec, g.workspace, credits)
		// One statement made every grant of the run: each grant's span
		// covers it, and its e-mail continues that span's trace.
		ctx, span := g.rec.StartEffect(ctx, "credits grant", queried)
		b.intents = append(b.intents, b.h.email(ctx, *g.rec, "credits-granted", g.rec.BusinessKey(g.invoice.ID, Operation), g.workspace, credits, g.invoice.ID))
		span.End()
	}
	return nil
}

// eligible are the paid invoices among recs, each asked for by its first
// event of the run.
func eligible(ctx context.Context, tx pgx.Tx, recs []consumers.Record, from int) ([]pendingGrant, error) {
	// Sized for a run of paid invoices, most of a backlog: grown from
	// nothing, the map moved every key at each of its doublings.
	grants := make([]pendingGrant, 0, len(recs))
	asked := make(map[[3]string]bool, len(recs))
	for i := range recs {
		rec := &recs[i]
		if rec.Event.Type != typePaid {
			continue
		}
		obj, ok, err := paidInvoice(ctx, tx, *rec)
		if err != nil {
			return nil, err
		}
		k := [3]string{rec.Event.SourceID, rec.Event.SourceAccount, obj.ID}
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
func (b *batch) insertGrants(ctx context.Context, grants []pendingGrant, credits int64) ([]int64, error) {
	n := len(grants)
	tenants, workspaces, sources := make([]string, n), make([]string, n), make([]string, n)
	accounts, invoices, events, inboxIDs := make([]string, n), make([]string, n), make([]string, n), make([]*int64, n)
	topics, partitions, offsets := make([]string, n), make([]int32, n), make([]int64, n)
	for i, g := range grants {
		ev := g.rec.Event
		tenants[i], workspaces[i], sources[i] = ev.TenantID, g.workspace, ev.SourceID
		accounts[i], invoices[i], events[i], inboxIDs[i] = ev.SourceAccount, g.invoice.ID, ev.ID, g.rec.InboxID()
		topics[i], partitions[i], offsets[i] = g.rec.Topic, g.rec.Partition, g.rec.Offset
	}
	p := &b.params[0]
	p.Reset()
	for _, ids := range [][]string{tenants, workspaces, sources} {
		if err := p.UUID(ids); err != nil {
			return nil, fmt.Errorf("grant credits: %w", err)
		}
	}
	p.Text(accounts)
	p.Text(invoices)
	p.Text(events)
	p.NullInt8(inboxIDs)
	p.TextScalar(RefundOperation)
	p.TextScalar(Operation)
	p.Int8Scalar(credits)
	p.Text(topics)
	p.Int4(partitions)
	p.Int8(offsets)
	rr, err := pg.ExecPrepared(ctx, b.tx, "sluice_credits_grants", grantBatchSQL, p)
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

// takeIntents returns the batch's unwritten e-mails and forgets them.
func (b *batch) takeIntents() []consumers.Intent {
	intents := b.intents
	b.intents = nil
	return intents
}

// workspacesOf fills in each grant's workspace: from the batch's cache, and
// for customers not seen yet in this batch, with one query for them all. A
// customer that maps to none is a permanent failure of its record.
func (b *batch) workspacesOf(ctx context.Context, grants []pendingGrant) error {
	known := b.workspaces
	var askTenants, askCustomers []string
	asked := make(map[[2]string]bool, len(grants))
	for _, g := range grants {
		k := [2]string{g.rec.Event.TenantID, g.invoice.Customer}
		if _, ok := known[k]; ok || asked[k] {
			continue
		}
		asked[k] = true
		askTenants, askCustomers = append(askTenants, k[0]), append(askCustomers, k[1])
	}
	if len(askTenants) > 0 {
		p := &b.params[0]
		p.Reset()
		if err := p.UUID(askTenants); err != nil {
			return fmt.Errorf("find workspaces: %w", err)
		}
		p.Text(askCustomers)
		rr, err := pg.ExecPrepared(ctx, b.tx, "sluice_credits_workspaces", workspacesSQL, p)
		if err != nil {
			return fmt.Errorf("find workspaces: %w", err)
		}
		for rr.NextRow() {
			v := rr.Values()
			ord := int64(-1)
			if len(v[0]) == 8 {
				ord = int64(binary.BigEndian.Uint64(v[0]))
			}
			if ord < 1 || ord > int64(len(askTenants)) {
				rr.Close() //nolint:errcheck // the error below is the one to report
				return errors.New("find workspaces: malformed result row")
			}
			known[[2]string{askTenants[ord-1], askCustomers[ord-1]}] = string(v[1])
		}
		if _, err := rr.Close(); err != nil {
			return fmt.Errorf("find workspaces: %w", err)
		}
	}
	// Every customer mapped to no workspace is named at once: each record
	// is dead-lettered with its own reason, in one more attempt.
	var unmapped map[int]error
	for i := range grants {
		g := &grants[i]
		ws, ok := known[[2]string{g.rec.Event.TenantID, g.invoice.Customer}]
		if !ok {
			if unmapped == nil {
				unmapped = map[int]error{}
			}
			unmapped[g.at] = consumers.Permanent(fmt.Errorf("%w: customer %s", ErrNoWorkspace, g.invoice.Customer))
			continue
		}
		g.workspace = ws
	}
	return consumers.RecordsFailed(unmapped)
}
