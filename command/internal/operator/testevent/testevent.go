// Package testevent builds the body of a test event of a chosen type for
// an endpoint: from the tenant's last real event of that type, masked, or,
// when there is none (or its body is gone), from the type's JSON schema, a
// minimal valid example. It only builds: the deliverer sends the test as a
// delivery of its own (endpoints.TestEvent), never through the inbox, so
// no effect group applies it and no trail or order holds it.
package testevent

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sluicehq/sluice/internal/refusal"
	"github.com/sluicehq/sluice/internal/store/catalog"
	"github.com/sluicehq/sluice/internal/store/endpoints"
	"github.com/sluicehq/sluice/schemas"
)

//go:embed sql/last_event.sql
var lastEventSQL string

// Where a test event's body came from.
const (
	// FromSynthetic: no type chosen, Sluice's own sluice.test.
	FromSynthetic = "synthetic"
	// FromLastEvent: the tenant's newest event of the type, masked.
	FromLastEvent = "last_event"
	// FromSchema: a minimal example the type's schema accepts.
	FromSchema = "schema"
)

// Masked is what stands in a masked string.
const Masked = "masked"

// kept are the keys whose string values say what an event is rather than
// whom it is about: they stay as received.
var kept = []string{"type", "object", "status", "currency", "api_version", "action", "event"}

// Builder finds a test event's body.
type Builder struct {
	Pool *pgxpool.Pool
	// Builtin is the deployment's catalogue (Sluice's types and the
	// binary's own); Types the tenants' own (nil: none).
	Builtin *schemas.Catalogue
	Types   *catalog.Store
}

// Example is a test event's body and where it came from.
type Example struct {
	Type string `json:"event_type" doc:"The event type sent (ce-type)."`
	From string `json:"from" enum:"synthetic,last_event,schema" doc:"Where the body came from: synthetic (sluice.test, no type chosen), last_event (the tenant's newest event of the type, masked) or schema (a minimal example its schema accepts, when the tenant has none)."`
	// EventID is the last event's id (FromLastEvent).
	EventID string `json:"based_on,omitempty" doc:"The id of the event the body was taken from (from last_event)."`
	// Masked are the JSON pointers of the strings masked (FromLastEvent).
	Masked []string `json:"masked,omitempty" doc:"JSON pointers of the string values replaced by \"masked\" (from last_event): every string except the values of type, object, status, currency, api_version, action and event; numbers, booleans and nulls are kept."`
	Body   []byte   `json:"body,omitempty" doc:"The body sent."`
}

// Event is what the deliverer sends for ex: its type and body, or, for a
// synthetic one, the zero TestEvent (sluice.test, made up as it is sent).
func (ex Example) Event() endpoints.TestEvent {
	if ex.From == FromSynthetic || ex.From == "" {
		return endpoints.TestEvent{}
	}
	return endpoints.TestEvent{Type: ex.Type, Body: ex.Body}
}

// Synthetic is the example of no chosen type: sluice.test.
func Synthetic() Example {
	return Example{Type: endpoints.SyntheticTestType, From: FromSynthetic}
}

// Build is the body of a test of eventType (kind.type, as endpoints'
// filters name it) for tenant: its newest event of the type among its
// newest 10,000, masked, or the type's minimal example. A type neither
// the deployment nor the tenant declares, and none received, names
// nothing: not found.
func (b Builder) Build(ctx context.Context, tenant, eventType string) (Example, error) {
	kind, typ, ok := strings.Cut(eventType, ".")
	if !ok || kind == "" || typ == "" {
		return Example{}, refusal.InvalidField("event_type", "must be a kind and a type, as endpoints' filters name it (stripe.invoice.paid)")
	}
	ex := Example{Type: eventType}
	var body []byte
	err := b.Pool.QueryRow(ctx, lastEventSQL, tenant, kind, typ).Scan(&ex.EventID, &body)
	switch {
	case err == nil:
		ex.From = FromLastEvent
		ex.Body, ex.Masked, err = mask(body)
		return ex, err
	case !errors.Is(err, pgx.ErrNoRows):
		return ex, fmt.Errorf("read the last %s event: %w", eventType, err)
	}
	entry, err := b.schema(ctx, tenant, kind, typ)
	if err != nil {
		return ex, err
	}
	ex.From = FromSchema
	if ex.Body, err = entry.Example(); err != nil {
		return ex, refusal.InvalidField("event_type", "%v", err)
	}
	return ex, nil
}

// schema is the newest schema of kind.typ: the tenant's own type first,
// then the deployment's.
func (b Builder) schema(ctx context.Context, tenant, kind, typ string) (*schemas.Entry, error) {
	if b.Types != nil {
		types, err := b.Types.Types(ctx, tenant)
		if err != nil {
			return nil, err
		}
		if m, ok := types[catalog.TypeKey(kind, typ)]; ok {
			return b.Types.Compiled(ctx, tenant, m)
		}
	}
	if b.Builtin != nil {
		if e, ok := b.Builtin.Lookup(kind, typ); ok {
			return e, nil
		}
	}
	return nil, refusal.NoSuch("event type", kind+"."+typ+" (none received, and no schema declares it)")
}

// mask replaces every string of a JSON body by Masked, except the values
// of the kept keys, and says where (JSON pointers, keys in order); numbers
// keep their digits. A body that is no JSON cannot be masked: refused.
func mask(body []byte) ([]byte, []string, error) {
	var doc any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return nil, nil, refusal.InvalidField("event_type", "the last event of this type is not JSON: it cannot be masked")
	}
	var where []string
	doc = maskValue(doc, "", "", &where)
	out, err := json.Marshal(doc)
	return out, where, err
}

func maskValue(v any, key, at string, where *[]string) any {
	switch v := v.(type) {
	case string:
		if slices.Contains(kept, key) {
			return v
		}
		*where = append(*where, at)
		return Masked
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			v[k] = maskValue(v[k], k, at+"/"+pointerToken(k), where)
		}
	case []any:
		for i := range v {
			v[i] = maskValue(v[i], key, at+"/"+strconv.Itoa(i), where)
		}
	}
	return v
}

// pointerToken escapes a key for a JSON pointer (RFC 6901).
func pointerToken(k string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(k)
}
