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
	for _, h := range eventHeaders {
		if h.key != HeaderTime {
			size += len(h.key) + len(h.value(&e)) + 6
		}
	}
	return e.AppendOutboxHeaders(make([]byte, 0, size))
}

// AppendOutboxHeaders appends OutboxHeaders to buf: ingest writes them
// into the statement's parameters, not into a buffer of their own first.
func (e Event) AppendOutboxHeaders(buf []byte) []byte {
	start := len(buf)
	buf = append(buf, '{')
	for _, h := range eventHeaders {
		var v string
		switch {
		case h.key == HeaderTime && e.Time.IsZero():
			continue
		case h.key != HeaderTime:
			if v = h.value(&e); v == "" && !h.always {
				continue
			}
		}
		if len(buf) > start+1 {
			buf = append(buf, ',')
		}
		buf = append(append(append(buf, '"'), h.key...), '"', ':')
		switch {
		case h.key == HeaderTime:
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
// the characters HTML escaping replaces.
func plainJSON(s string) bool {
	for i := 0; i < len(s); i++ {
		if !plainByte[s[i]] {
			return false
		}
	}
	return true
}

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

// eventHeaders is every header an Event sets, sorted by key (the order
// OutboxHeaders writes), with its value and whether it is set when empty.
var eventHeaders = [...]struct {
	key    string
	value  func(*Event) string
	always bool
}{
	{HeaderAPIVersion, func(e *Event) string { return e.APIVersion }, false},
	{HeaderDataSchema, func(e *Event) string { return e.DataSchema }, false},
	{HeaderID, func(e *Event) string { return e.ID }, true},
	{HeaderPartitionKey, func(e *Event) string { return e.PartitionKey }, true},
	{HeaderSource, func(e *Event) string { return e.Source }, true},
	{HeaderSourceAccount, func(e *Event) string { return e.SourceAccount }, true},
	{HeaderSpecVersion, func(*Event) string { return SpecVersion }, true},
	{HeaderSubject, func(e *Event) string { return e.Subject }, false},
	{HeaderTenantID, func(e *Event) string { return e.TenantID }, true},
	{HeaderTime, func(e *Event) string {
		if e.Time.IsZero() {
			return ""
		}
		return e.Time.UTC().Format(time.RFC3339Nano)
	}, false},
	{HeaderType, func(e *Event) string { return e.Type }, true},
	{HeaderContentType, func(e *Event) string { return e.ContentType }, false},
	{HeaderClaim, func(e *Event) string { return e.Claim }, false},
	{HeaderInboxID, func(e *Event) string { return e.InboxID }, false},
	{HeaderRecovered, func(e *Event) string {
		if e.Recovered {
			return "true"
		}
		return ""
	}, false},
	{HeaderTraceParent, func(e *Event) string { return e.TraceParent }, false},
}

// each calls fn with every header e sets, in key order.
func (e *Event) each(fn func(k, v string)) {
	for _, h := range eventHeaders {
		if v := h.value(e); v != "" || h.always {
			fn(h.key, v)
		}
	}
}

// Parse reads an Event back from record headers.
func Parse(headers map[string]string) (Event, error) {
	return parse(func(k string) string { return headers[k] })
}

func parse(headers func(string) string) (Event, error) {
	if v := headers(HeaderSpecVersion); v != SpecVersion {
		return Event{}, fmt.Errorf("envelope: %s = %q, want %q", HeaderSpecVersion, v, SpecVersion)
	}
	e := Event{
		ID:            headers(HeaderID),
		Source:        headers(HeaderSource),
		Type:          headers(HeaderType),
		Subject:       headers(HeaderSubject),
		TenantID:      headers(HeaderTenantID),
		SourceAccount: headers(HeaderSourceAccount),
		PartitionKey:  headers(HeaderPartitionKey),
		ContentType:   headers(HeaderContentType),
		TraceParent:   headers(HeaderTraceParent),
		APIVersion:    headers(HeaderAPIVersion),
		DataSchema:    headers(HeaderDataSchema),
		InboxID:       headers(HeaderInboxID),
		Claim:         headers(HeaderClaim),
		Recovered:     headers(HeaderRecovered) == "true",
	}
	if e.ID == "" || e.Type == "" || e.TenantID == "" {
		return Event{}, errors.New("envelope: missing ce_id, ce_type or ce_tenantid")
	}
	if rest, ok := strings.CutPrefix(e.Source, "/tenants/"); ok {
		if _, sourceID, ok := strings.Cut(rest, "/sources/"); ok {
			e.SourceID = sourceID
		}
	}
	if t := headers(HeaderTime); t != "" {
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
