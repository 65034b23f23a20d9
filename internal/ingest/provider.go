package ingest

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/segmentio/encoding/json"

	"github.com/sluicehq/sluice/internal/pg"
	"github.com/sluicehq/sluice/internal/provider"
	"github.com/sluicehq/sluice/internal/provider/jsonptr"
	"github.com/sluicehq/sluice/schemas"
)

// providerEvent is what ingest reads from an authenticated body: enough to
// build the event key, the resource key and the record headers. Everything
// else stays in the body, untouched.
type providerEvent struct {
	ID         string
	Type       string
	Time       time.Time
	ObjectID   string
	ObjectType string
	// APIVersion is the provider API version the body is written in, when
	// the body says (Stripe's api_version).
	APIVersion string
	// Entry is the catalogue's schema for the type; nil when none handles it.
	Entry *schemas.Entry
	// Problem, for a known type, says why the event cannot be published
	// (e.g. no object id where the catalogue points): it is quarantined.
	Problem string
	// Subscribed, for a type with no entry, says that one of the tenant's
	// enabled endpoints takes it: it is published for them alone (the
	// destinations topic) instead of kept as unhandled.
	Subscribed bool
	// doc is the parsed body, kept so schema validation does not parse it
	// a second time.
	doc any
}

var errNoEventID = errors.New("body names no event id or type")

// maxIdentifier bounds event ids, types and object ids: they are keys and
// headers, not content.
const maxIdentifier = 512

// lookup finds the catalogue entry of a type (catalogue): nil when none
// handles it; and, for a type with none, whether one of the tenant's
// endpoints takes its full type ({kind}.{provider type}).
type lookup interface {
	Lookup(kind, typ string) (*schemas.Entry, error)
	Subscribed(fullType string) (bool, error)
}

// readEvent extracts the event fields of an authenticated body: the source's
// provider reads them (read, its scheme's Read), and the catalogue entry's
// pointers, when it has them, say where the object id and event time are
// instead of where the provider puts them.
func readEvent(src *source, h http.Header, body []byte, catalogue lookup) (providerEvent, error) {
	doc, err := parseJSON(body)
	if err != nil {
		return providerEvent{}, err
	}
	ev := src.Scheme.Read(h, doc)
	if ev.ID == "" || ev.Type == "" {
		return providerEvent{}, errNoEventID
	}
	pe := providerEvent{ID: ev.ID, Type: ev.Type, ObjectType: ev.ObjectType, APIVersion: ev.APIVersion, doc: doc}
	if err := pe.find(catalogue, string(src.Kind)); err != nil {
		return providerEvent{}, err
	}
	if pe.Entry != nil {
		ev = entryPointers(ev, pe.Entry)
	}
	pe.locate(ev, h)
	if checkIdentifiers(pe.APIVersion) != nil {
		pe.APIVersion = "" // informative only: not worth refusing the event for
	}
	if err := checkIdentifiers(pe.ID, pe.Type, pe.ObjectID, pe.ObjectType); err != nil {
		return providerEvent{}, err
	}
	return pe, nil
}

// parseJSON parses an authenticated body. segmentio's parser costs under
// half of encoding/json's into an any; it has no depth limit, so the caller
// has bounded the body's shape first (Shape). The document's strings and
// numbers point into body rather than into copies, which were most of an
// accepted event's allocations: no body is written after it is read, and
// none of the document outlives the request but as a field of its
// delivery, which holds the body anyway.
func parseJSON(body []byte) (any, error) {
	var doc any
	rest, err := json.Parse(body, &doc, json.UseNumber|json.DontCopyString|json.DontCopyNumber)
	if err != nil {
		return nil, fmt.Errorf("body is not JSON: %w", err)
	}
	if len(rest) > 0 {
		return nil, errors.New("body is not JSON: data after the top-level value")
	}
	return doc, nil
}

// find looks the event's type up; a type that exists but cannot publish
// here leaves a Problem (quarantined), a catalogue that cannot be read an
// errCatalogue. A type with no entry is looked up in the tenant's
// endpoints' filters (Subscribed).
func (pe *providerEvent) find(catalogue lookup, kind string) error {
	entry, err := catalogue.Lookup(kind, pe.Type)
	// errors.As's target escapes: asked of every event, it allocated each
	// time, though an error is rare.
	if u := (*unusableEntry)(nil); err != nil && errors.As(err, &u) {
		pe.Problem = u.reason
		return nil
	}
	pe.Entry = entry
	if err != nil || entry != nil {
		return err
	}
	pe.Subscribed, err = catalogue.Subscribed(kind + "." + pe.Type)
	return err
}

// entryPointers prefers the catalogue entry's pointers to the provider's.
func entryPointers(ev provider.Event, entry *schemas.Entry) provider.Event {
	if entry.ObjectIDPointer != "" {
		ev.ObjectIDPointer = entry.ObjectIDPointer
	}
	if entry.EventTimePointer != "" {
		ev.TimePointer, ev.TimeFormat = entry.EventTimePointer, entry.EventTimeFormat
	}
	return ev
}

// locate reads the object id and time where ev points: a JSON pointer into
// the body, or header:<Name> (a tenant's entry may say either). A known type
// that lacks either where its entry needs it gets a Problem: it is
// quarantined.
func (pe *providerEvent) locate(ev provider.Event, h http.Header) {
	if name, ok := strings.CutPrefix(ev.ObjectIDPointer, "header:"); ok {
		pe.ObjectID = h.Get(name)
	} else if ev.ObjectIDPointer != "" {
		pe.ObjectID, _ = jsonptr.String(pe.doc, ev.ObjectIDPointer)
	}
	var timeErr error
	if name, ok := strings.CutPrefix(ev.TimePointer, "header:"); ok {
		pe.Time, timeErr = headerTime(h.Get(name), ev.TimeFormat)
	} else if ev.TimePointer != "" {
		pe.Time, timeErr = jsonptr.Time(pe.doc, ev.TimePointer, ev.TimeFormat)
	}
	switch {
	case pe.Entry != nil && pe.ObjectID == "" && len(pe.Entry.ObjectIDVia) == 0:
		pe.Problem = fmt.Sprintf("%s: no object id at %s", pe.Type, ev.ObjectIDPointer)
	case pe.Entry != nil && timeErr != nil:
		pe.Problem = fmt.Sprintf("%s: %v", pe.Type, timeErr)
	}
}

// headerTime reads an event time from a header's text as jsonptr.Time reads
// it from the body: absent is the zero time.
func headerTime(v, format string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	return jsonptr.Time(v, "", format)
}

// checkIdentifiers refuses ids that could not be stored as keys (text with
// no NUL, bounded): such a delivery would fail the transaction it shares.
// U+FFFD is refused too: JSON parsers put it where a string held invalid
// UTF-8 or a lone surrogate, so two different ids would become one key and
// the second delivery a conflict.
func checkIdentifiers(ids ...string) error {
	for _, id := range ids {
		if len(id) > maxIdentifier || !utf8.ValidString(id) || strings.ContainsRune(id, 0) || strings.ContainsRune(id, utf8.RuneError) {
			return errors.New("event id, type or object id is not a short, valid UTF-8 string")
		}
	}
	return nil
}

// maxReason bounds a quarantine reason.
const maxReason = 2000

// storableText makes a quarantine reason safe for its column (pg.Text).
// Schema errors may quote the offending value, which came from the sender.
func storableText(s string) string { return pg.Text(s, maxReason) }
