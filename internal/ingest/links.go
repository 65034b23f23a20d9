package ingest

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/segmentio/encoding/json"

	"github.com/sluicehq/sluice/internal/envelope"
	"github.com/sluicehq/sluice/internal/provider/jsonptr"
	"github.com/sluicehq/sluice/internal/store/inbox"
	"github.com/sluicehq/sluice/schemas"
)

// Links: some events name their resource only through another object. From
// Stripe API version 2025-03-31 (basil) on, a charge.refunded names its
// payment intent and charge, never its invoice; the invoice it refunds is
// known from invoice_payment.paid (or invoice.paid, whose older versions name
// their payment intent and charge, and whose payments list may be included).
//
// The catalogue says which events record links (Entry.Links: payment id ->
// the event's object) and which may need one (Entry.ObjectIDVia). Only
// batches holding such events pay for it: their accepting statement runs in
// a transaction with the statements below, under a per-source advisory lock,
// so of two concurrent batches (one waiting, one linking) the later sees
// what the earlier committed. In that transaction:
//   - the new events' links are recorded (the first link of an id stands);
//   - a new event with no object id is kept as waiting (inbox status
//     'waiting', inbox_waiting holds its outbox row minus the key): never
//     quarantined for its shape, never published without its resource;
//   - every waiting event that a link now resolves, this batch's or an older
//     one's, is published to its object's partition and marked published.
//
// A refund that arrives before its invoice's payment is therefore published
// after the invoice_payment.paid that resolves it, and before or after the
// invoice.paid as they come: the credits consumer stops a grant that a
// refund preceded. What no link ever resolves stays waiting, visible in the
// inbox and delivery_log, for reconciliation.

// wait is what a waiting delivery needs to be published once resolved.
type wait struct {
	Via        []string // ids that may resolve the object, in order of preference
	ObjectType string
	Topic      string
}

// linkDelivery fills in the links an accepted event records and, when the
// event has no object id of its own, turns it into a waiting one.
func linkDelivery(d *delivery, entry *schemas.Entry, pe providerEvent, topic string) {
	if pe.ObjectID != "" {
		d.Links = pointerStrings(pe.doc, entry.Links)
		return
	}
	via := pointerStrings(pe.doc, entry.ObjectIDVia)
	d.Status, d.Wait = inbox.StatusWaiting, &wait{Via: via, ObjectType: entry.ObjectType, Topic: topic}
	d.Reason = storableText(fmt.Sprintf("%s: no %s id at %s; waiting for %s to be linked to one",
		pe.Type, entry.ObjectType, entry.ObjectIDPointer, strings.Join(via, " or ")))
}

// pointerStrings reads the strings (or numbers) at each pointer, in order,
// without repeats or empty values; a "*" token walks every array element.
func pointerStrings(doc any, ptrs []string) []string {
	var out []string
	add := func(v any) {
		if s, ok := v.(string); ok && s != "" && !slices.Contains(out, s) && checkIdentifiers(s) == nil {
			out = append(out, s)
		}
	}
	for _, ptr := range ptrs {
		head, rest, wild := strings.Cut(ptr, "/*")
		if !wild {
			if s, ok := jsonptr.String(doc, ptr); ok {
				add(s)
			}
			continue
		}
		arr, _ := jsonptr.Get(doc, head)
		elems, _ := arr.([]any)
		for i := range elems {
			if s, ok := jsonptr.String(doc, head+"/"+strconv.Itoa(i)+rest); ok {
				add(s)
			}
		}
	}
	return out
}

// linking reports whether a batch records or needs links.
func linking(batch []*request) bool {
	for _, r := range batch {
		if r.d.Wait != nil || len(r.d.Links) > 0 {
			return true
		}
	}
	return false
}

// link runs in the transaction that accepted batch, after its accepting
// statement: it records the links of the batch's new events, keeps its new
// waiting events, and publishes every waiting event that is now resolved.
// Results of this batch's events released here become accepted.
func link(ctx context.Context, tx pgx.Tx, batch []*request, results []result) error {
	ls := collectLinks(batch, results)
	if len(ls.sources) == 0 {
		return nil
	}
	slices.Sort(ls.sources)
	b := &pgx.Batch{}
	b.Queue(linkLockSQL, slices.Compact(ls.sources))
	if len(ls.id) > 0 {
		b.Queue(linkSQL, ls.source, ls.account, ls.objectType, ls.id, ls.object, ls.inbox)
	}
	waiting := queueWaits(b, batch, ls.waits, results)
	if err := tx.SendBatch(ctx, b).Close(); err != nil {
		return fmt.Errorf("record links: %w", err)
	}
	released, err := release(ctx, tx, waiting, ls.id)
	if err != nil {
		return err
	}
	for i := range results {
		if results[i].outcome == OutcomeWaiting && released[results[i].inboxID] {
			results[i].outcome = OutcomeAccepted
		}
	}
	return nil
}

// linkSet is what a batch's new events link and wait for: the links as
// the column arrays sql/link.sql takes.
type linkSet struct {
	sources                                 []string // of the events that link or wait, to lock
	source, account, objectType, id, object []string
	inbox                                   []int64
	waits                                   []int // indexes into batch
}

func collectLinks(batch []*request, results []result) linkSet {
	var ls linkSet
	for i, r := range batch {
		d, res := r.d, results[i]
		if res.outcome != OutcomeAccepted && res.outcome != OutcomeWaiting {
			continue // not new in this transaction, quarantined or unhandled: it links nothing
		}
		if d.Wait == nil && len(d.Links) == 0 {
			continue
		}
		ls.sources = append(ls.sources, d.SourceID)
		for _, id := range d.Links {
			ls.source, ls.account, ls.objectType = append(ls.source, d.SourceID), append(ls.account, d.Account), append(ls.objectType, d.ObjectType)
			ls.id, ls.object, ls.inbox = append(ls.id, id), append(ls.object, d.ObjectID), append(ls.inbox, res.inboxID)
		}
		if d.Wait != nil {
			ls.waits = append(ls.waits, i)
		}
	}
	return ls
}

// queueWaits keeps the batch's new waiting events (waits, indexes into
// batch) and returns their inbox ids.
func queueWaits(b *pgx.Batch, batch []*request, waits []int, results []result) []int64 {
	waiting := make([]int64, 0, len(waits))
	for _, i := range waits {
		d := batch[i].d
		b.Queue(waitSQL, results[i].inboxID, d.TenantID, d.SourceID, d.Account, d.Wait.ObjectType, d.Wait.Via,
			d.Wait.Topic, string(d.Envelope.OutboxHeaders()), d.Payload)
		waiting = append(waiting, results[i].inboxID)
	}
	return waiting
}

// release publishes the waiting events now resolved: this batch's own
// (waiting) and those waiting for an id the batch linked (linked). It
// returns the inbox ids it published.
func release(ctx context.Context, tx pgx.Tx, waiting []int64, linked []string) (map[int64]bool, error) {
	rows, err := tx.Query(ctx, resolveSQL, waiting, linked)
	if err != nil {
		return nil, fmt.Errorf("resolve waiting events: %w", err)
	}
	var (
		ids           []int64
		objects, hdrs []string
		keys          [][]byte
	)
	var (
		id                              int64
		tenant, objectType, object, raw string
	)
	_, err = pgx.ForEachRow(rows, []any{&id, &tenant, &objectType, &object, &raw}, func() error {
		var h map[string]string
		if err := json.Unmarshal([]byte(raw), &h); err != nil {
			return fmt.Errorf("waiting event %d: headers: %w", id, err)
		}
		key := envelope.Key(tenant, objectType, object)
		h[envelope.HeaderSubject], h[envelope.HeaderPartitionKey] = object, key
		out, err := json.Marshal(h)
		if err != nil {
			return fmt.Errorf("waiting event %d: headers: %w", id, err)
		}
		ids, objects, keys, hdrs = append(ids, id), append(objects, object), append(keys, []byte(key)), append(hdrs, string(out))
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("resolve waiting events: %w", err)
	}
	if len(ids) == 0 {
		return nil, nil
	}
	if _, err := tx.Exec(ctx, releaseSQL, ids, objects, keys, hdrs); err != nil {
		return nil, fmt.Errorf("publish resolved events: %w", err)
	}
	out := make(map[int64]bool, len(ids))
	for _, id := range ids {
		out[id] = true
	}
	return out, nil
}
