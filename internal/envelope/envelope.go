// Package envelope is Sluice's Kafka record format: the CloudEvents Kafka
// binding in binary mode. The record value is the verified body exactly as
// received; everything about the event travels in headers.
//
// Ingest writes these headers into the outbox row, the relay copies them to
// Kafka untouched, and consumers read them back: one definition keeps the
// three stages agreeing without importing each other.
package envelope

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/segmentio/encoding/json"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Header names (CloudEvents Kafka binding, binary content mode, plus Sluice's
// own extensions).
const (
	HeaderSpecVersion   = "ce_specversion"
	HeaderID            = "ce_id"
	HeaderSource        = "ce_source"
	HeaderType          = "ce_type"
	HeaderSubject       = "ce_subject"
	HeaderTime          = "ce_time"
	HeaderTenantID      = "ce_tenantid"
	HeaderSourceAccount = "ce_sourceaccount"
	HeaderPartitionKey  = "ce_partitionkey"
	HeaderContentType   = "content-type"
	HeaderTraceParent   = "traceparent"
	// HeaderAPIVersion is the provider API version the body is written in
	// (Stripe's api_version), when the provider says: a payload's shape
	// depends on it.
	HeaderAPIVersion = "ce_apiversion"
	// HeaderDataSchema names the schema that validated the body: set on
	// events of a tenant's own types (DataSchemaURI), never on built-ins.
	HeaderDataSchema = "ce_dataschema"
	// HeaderInboxID is the processing id: the inbox row the event came from.
	HeaderInboxID = "sluice_inboxid"
	// HeaderOutboxID names the outbox row a record was relayed from; two
	// records with the same value are one row published twice.
	HeaderOutboxID = "sluice_outboxid"
	// HeaderClaim is set instead of a value when the body was too large for
	// Kafka; it names the inbox row that holds it.
	HeaderClaim = "sluice_claim"
	// HeaderRecovered marks a record whose event reconciliation recovered
	// from the provider's API rather than received as a webhook.
	HeaderRecovered = "sluice_recovered"
)

// SpecVersion is the CloudEvents version Sluice emits.
const SpecVersion = "1.0"

// MaxInlineBody is the largest body carried as the record value; larger
// bodies travel by claim so a 25 MiB payload never meets Kafka's size limit.
const MaxInlineBody = 256 << 10

// Event is what a consumer knows about a record.
type Event struct {
	ID            string // provider event id
	Source        string // /tenants/{tenant}/sources/{source}
	Type          string // {kind}.{provider type}, e.g. stripe.invoice.paid
	Subject       string // object id
	Time          time.Time
	TenantID      string
	SourceID      string
	SourceAccount string
	PartitionKey  string
	ContentType   string
	TraceParent   string
	APIVersion    string
	DataSchema    string
	InboxID       string
	Claim         string
	Recovered     bool
}

// Key is the resource key: every event about one resource shares it, and so
// shares one Kafka partition and its order.
func Key(tenantID, objectType, objectID string) string {
	return tenantID + "/" + objectType + "/" + objectID
}

// SourceURI is the ce_source of events from one source.
func SourceURI(tenantID, sourceID string) string {
	return "/tenants/" + tenantID + "/sources/" + sourceID
}

// Headers returns the record headers for e.
func (e Event) Headers() map[string]string {
	h := make(map[string]string, len(eventHeaders))
	e.each(func(k, v string) { h[k] = v })
	return h
}

// OutboxHeaders is e's headers as the outbox stores them: the bytes
// OutboxHeaders(e.Headers()) gives, written straight from e (no map, no
// sort: eventHeaders is in key order), since every accepted event and every
// intent has them.
func (e Event) OutboxHeaders() []byte {
	size := 2 + len(HeaderTime) + 40 // ce_time's text, appended in place
	for k, h := range eventHeaders {
		if k != iTime {
			size += len(h.key) + len(e.value(k)) + 6
		}
	}
	return e.AppendOutboxHeaders(make([]byte, 0, size))
}

// AppendOutboxHeaders appends OutboxHeaders to buf: ingest writes them
// into the statement's parameters, not into a buffer of their own first.
func (e Event) AppendOutboxHeaders(buf []byte) []byte {
	start := len(buf)
	buf = append(buf, '{')
	for k, h := range eventHeaders {
		var v string
		switch {
		case k == iTime && e.Time.IsZero():
			continue
		case k != iTime:
			if v = e.value(k); v == "" && !h.always {
				continue
			}
		}
		if len(buf) > start+1 {
			buf = append(buf, ',')
		}
		buf = append(append(append(buf, '"'), h.key...), '"', ':')
		switch {
		case k == iTime:
			buf = append(e.Time.UTC().AppendFormat(append(buf, '"'), time.RFC3339Nano), '"')
		case plainJSON(v):
			buf = append(append(append(buf, '"'), v...), '"')
		default:
			buf = json.AppendEscape(buf, v, json.EscapeHTML)
		}
	}
	return append(buf, '}')
}

// plainJSON reports whether s is its own JSON text between quotes, as
// json.Marshal writes it: printable ASCII without quotes, backslashes or
// the characters HTML escaping replaces. Eight bytes at a time (every
// header of every event and intent passes here), the rest one by one.
func plainJSON(s string) bool {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		x := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
			uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
		if x&highBits != 0 || less(x, 0x20) || hasByte(x, '"') || hasByte(x, '\\') ||
			hasByte(x, '<') || hasByte(x, '>') || hasByte(x, '&') {
			return false
		}
	}
	for ; i < len(s); i++ {
		if !plainByte[s[i]] {
			return false
		}
	}
	return true
}

const (
	lowBits  = 0x0101010101010101
	highBits = 0x8080808080808080
)

// less reports whether a byte of x, none of which has its high bit set, is
// below n (n <= 128).
func less(x uint64, n byte) bool { return (x-lowBits*uint64(n))&^x&highBits != 0 }

// hasByte reports whether a byte of x is c.
func hasByte(x uint64, c byte) bool { return less(x^(lowBits*uint64(c)), 1) }

// plainByte is plainJSON for one byte.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = true
	}
	for _, c := range `"\<>&` {
		t[c] = false
	}
	return t
}()

// The places of the headers in eventHeaders, which is sorted by key.
const (
	iAPIVersion = iota
	iDataSchema
	iID
	iPartitionKey
	iSource
	iSourceAccount
	iSpecVersion
	iSubject
	iTenantID
	iTime
	iType
	iContentType
	iClaim
	iInboxID
	iRecovered
	iTraceParent
	headerCount
)

// eventHeaders is every header an Event sets, sorted by key (the order
// OutboxHeaders writes), and whether it is set when empty; its value is
// Event.value.
var eventHeaders = [headerCount]struct {
	key    string
	always bool
}{
	iAPIVersion:    {HeaderAPIVersion, false},
	iDataSchema:    {HeaderDataSchema, false},
	iID:            {HeaderID, true},
	iPartitionKey:  {HeaderPartitionKey, true},
	iSource:        {HeaderSource, true},
	iSourceAccount: {HeaderSourceAccount, true},
	iSpecVersion:   {HeaderSpecVersion, true},
	iSubject:       {HeaderSubject, false},
	iTenantID:      {HeaderTenantID, true},
	iTime:          {HeaderTime, false},
	iType:          {HeaderType, true},
	iContentType:   {HeaderContentType, false},
	iClaim:         {HeaderClaim, false},
	iInboxID:       {HeaderInboxID, false},
	iRecovered:     {HeaderRecovered, false},
	iTraceParent:   {HeaderTraceParent, false},
}

// value is the value of header k (a place in eventHeaders) for e. A
// method, not a function in the table: called through a function value, e
// escaped to the heap on every call of OutboxHeaders.
func (e *Event) value(k int) string {
	switch k {
	case iSpecVersion:
		return SpecVersion
	case iTime:
		if e.Time.IsZero() {
			return ""
		}
		return e.Time.UTC().Format(time.RFC3339Nano)
	case iRecovered:
		if e.Recovered {
			return "true"
		}
		return ""
	}
	if f := e.text(k); f != nil {
		return *f
	}
	return ""
}

// text is the field that holds header k's value as it is, nil for the
// headers whose value is written from another type (value).
func (e *Event) text(k int) *string {
	switch k {
	case iAPIVersion:
		return &e.APIVersion
	case iDataSchema:
		return &e.DataSchema
	case iID:
		return &e.ID
	case iPartitionKey:
		return &e.PartitionKey
	case iSource:
		return &e.Source
	case iSourceAccount:
		return &e.SourceAccount
	case iSubject:
		return &e.Subject
	case iTenantID:
		return &e.TenantID
	case iType:
		return &e.Type
	case iContentType:
		return &e.ContentType
	case iClaim:
		return &e.Claim
	case iInboxID:
		return &e.InboxID
	case iTraceParent:
		return &e.TraceParent
	}
	return nil
}

// each calls fn with every header e sets, in key order.
func (e *Event) each(fn func(k, v string)) {
	for k, h := range eventHeaders {
		if v := e.value(k); v != "" || h.always {
			fn(h.key, v)
		}
	}
}

// headerValues is the value of each header an Event sets, by its place in
// eventHeaders ("" for an absent one).
type headerValues [headerCount]string

// Parse reads an Event back from record headers.
func Parse(headers map[string]string) (Event, error) {
	var vals headerValues
	for k := range eventHeaders {
		vals[k] = headers[eventHeaders[k].key]
	}
	return parse(&vals)
}

func parse(vals *headerValues) (Event, error) {
	if v := vals[iSpecVersion]; v != SpecVersion {
		return Event{}, fmt.Errorf("envelope: %s = %q, want %q", HeaderSpecVersion, v, SpecVersion)
	}
	// A literal, not a loop writing through Event.text: written through a
	// pointer the compiler cannot place, every string took a write barrier.
	e := Event{
		ID:            vals[iID],
		Source:        vals[iSource],
		Type:          vals[iType],
		Subject:       vals[iSubject],
		TenantID:      vals[iTenantID],
		SourceAccount: vals[iSourceAccount],
		PartitionKey:  vals[iPartitionKey],
		ContentType:   vals[iContentType],
		TraceParent:   vals[iTraceParent],
		APIVersion:    vals[iAPIVersion],
		DataSchema:    vals[iDataSchema],
		InboxID:       vals[iInboxID],
		Claim:         vals[iClaim],
		Recovered:     vals[iRecovered] == "true",
	}
	if e.ID == "" || e.Type == "" || e.TenantID == "" {
		return Event{}, errors.New("envelope: missing ce_id, ce_type or ce_tenantid")
	}
	if rest, ok := strings.CutPrefix(e.Source, "/tenants/"); ok {
		if _, sourceID, ok := strings.Cut(rest, "/sources/"); ok {
			e.SourceID = sourceID
		}
	}
	if t := vals[iTime]; t != "" {
		parsed, err := time.Parse(time.RFC3339Nano, t)
		if err != nil {
			return Event{}, fmt.Errorf("envelope: %s: %w", HeaderTime, err)
		}
		e.Time = parsed
	}
	return e, nil
}

// DataSchemaURI names version v of a tenant's event type: what ce_dataschema
// carries. kind is the source kind (or api); tenant ids are uuids and kinds
// and type names are limited to letters, digits, '.', '_' and '-'
// (internal/store/catalog), so the parts need no escaping.
func DataSchemaURI(tenantID, kind, eventType string, version int) string {
	return fmt.Sprintf("sluice:eventtype/%s/%s/%s/v%d", tenantID, kind, eventType, version)
}

// NewTraceParent starts a W3C trace for an event that arrived without one.
func NewTraceParent() string {
	var b [24]byte
	_, _ = rand.Read(b[:])
	return "00-" + hex.EncodeToString(b[:16]) + "-" + hex.EncodeToString(b[16:]) + "-01"
}

// Topics names Sluice's topics under a prefix ("sluice" by default), so
// several deployments or test runs can share one cluster.
type Topics struct{ Prefix string }

// Resource is the topic of one resource type, e.g. sluice.invoices.
func (t Topics) Resource(suffix string) string { return t.prefix() + "." + suffix }

// Tenant is the shared topic of one resource type of tenants' own event
// types, e.g. sluice.tenant.order: every tenant's events of that resource
// type, the tenant in the key and in ce_tenantid. Resource type names hold
// no '.', so no tenant topic can be one of Sluice's own.
func (t Topics) Tenant(resourceType string) string { return t.prefix() + ".tenant." + resourceType }

// Destinations is the topic of events published for tenants' endpoints
// alone: a type no handler and no schema knows, which one of its tenant's
// endpoints takes. Only the destinations fan-out reads it.
func (t Topics) Destinations() string { return t.Resource("destinations") }

// DeadLetter is the dead-letter topic of one consumer group.
func (t Topics) DeadLetter(group string) string { return group + ".dlq" }

func (t Topics) prefix() string {
	if t.Prefix == "" {
		return "sluice"
	}
	return t.Prefix
}

// TraceParentOf is the W3C traceparent of the span in ctx, the value the
// record format carries, or "" when ctx holds none.
func TraceParentOf(ctx context.Context) string {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return ""
	}
	carrier := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(ctx, carrier)
	return carrier[HeaderTraceParent]
}
