package effect

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sluicehq/sluice/internal/consumers"
)

// Envelope is what Sluice knows of an event beside its body: the
// CloudEvents headers of its Kafka record.
type Envelope struct {
	// ID is the provider's event id (ce_id): several events may ask for
	// one operation (a webhook and a reconciliation's repair), so an
	// effect is keyed by its business key, never by this.
	ID string
	// Type is {kind}.{provider type}: stripe.invoice.paid,
	// hmac.order.placed, api.order.placed.
	Type string
	// Version is the version of the tenant's own schema that validated the
	// event; 0 for Sluice's built-in types and a binary's own (whose
	// schemas are versioned with the binary).
	Version int
	// Subject is the id of the object the event is about.
	Subject string
	// Time is the provider's event time (zero when it gave none).
	Time time.Time
	// TenantID, SourceID and SourceAccount say whose event it is and which
	// verified source sent it.
	TenantID, SourceID, SourceAccount string
	// InboxID is Sluice's processing id: the order it accepted events in,
	// the same on every redelivery, so it breaks ties between equal
	// versions the same way on every replay.
	InboxID int64
	// PartitionKey is the resource key (tenant, object type, object id):
	// the Kafka key, whose records one worker applies in order.
	PartitionKey string
}

// Record is one event as a handler receives it: its envelope, where it
// is on Kafka, and its body.
type Record struct {
	Envelope
	// Topic, Partition and Offset are where the record is on Kafka; a
	// projection may keep them so an event's trail shows where its group
	// applied it.
	Topic     string
	Partition int32
	Offset    int64
	// Prepared is what Handler.Prepare learned outside the transaction,
	// handed to Apply; nil for handlers that prepare nothing.
	Prepared any

	rec *consumers.Record
}

// recordOf is the runtime's record as a handler sees it.
func recordOf(r *consumers.Record) Record {
	ev := r.Event
	out := Record{
		Envelope: Envelope{
			ID: ev.ID, Type: ev.Type, Subject: ev.Subject, Time: ev.Time,
			TenantID: ev.TenantID, SourceID: ev.SourceID, SourceAccount: ev.SourceAccount,
			PartitionKey: ev.PartitionKey, Version: schemaVersion(ev.DataSchema),
		},
		Topic: r.Topic, Partition: r.Partition, Offset: r.Offset, Prepared: r.Prepared, rec: r,
	}
	if id, err := strconv.ParseInt(ev.InboxID, 10, 64); err == nil {
		out.InboxID = id
	}
	return out
}

// schemaVersion reads the version at the end of a tenant type's
// dataschema URI (sluice:eventtype/<tenant>/<kind>/<type>/v<n>).
func schemaVersion(uri string) int {
	i := strings.LastIndex(uri, "/v")
	if i < 0 {
		return 0
	}
	n, err := strconv.Atoi(uri[i+2:])
	if err != nil {
		return 0
	}
	return n
}

// Body returns the event's body exactly as its sender signed it. A body
// above 256 KiB did not travel on Kafka: it is read from the inbox row
// the record names, in tx. A body gone past the payload horizon, or
// erased on request, is a permanent failure (the record becomes a dead
// letter saying so).
func (r Record) Body(ctx context.Context, tx pgx.Tx) ([]byte, error) {
	return r.rec.Body(ctx, tx)
}

// Decode reads the body (see Body) as JSON into v. A body that is not
// the JSON v expects is a permanent failure: retrying reads the same
// bytes.
func (r Record) Decode(ctx context.Context, tx pgx.Tx, v any) error {
	return r.rec.Decode(ctx, tx, v)
}

// BusinessKey is the identity of one operation on an object: (source,
// source account, object id, operation), e.g. an invoice's
// "initial-credit-grant". Every event asking for that operation, a
// webhook or its repair, names the same key.
func (r Record) BusinessKey(objectID, operation string) string {
	return r.SourceID + "/" + r.SourceAccount + "/" + objectID + "/" + operation
}

// Trace starts the trace span of one of the record's effects (a grant, a
// projection's update, an intent), a child of the span processing the
// record, when tracing is on; end it with the effect's error once the
// effect is written. name "" names it after the record's type. An intent
// emitted with the returned context continues that span's trace.
func (r Record) Trace(ctx context.Context, name string) (context.Context, func(error)) {
	ctx, span := r.rec.StartEffect(ctx, name, time.Time{})
	return ctx, func(err error) { consumers.EndSpan(span, err) }
}

// Event is a record whose body was decoded into the handler's type T.
type Event[T any] struct {
	Record
	// Payload is the body, decoded.
	Payload T
}
