package ingest

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/segmentio/encoding/json"

	"github.com/sluicehq/sluice/ingest/jsonptr"
	"github.com/sluicehq/sluice/ingest/provider"
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
	// doc is the parsed body, kept so schema validation does not parse it
	// a second time.
	doc any
}

var errNoEventID = errors.New("body names no event id or type")

// maxIdentifier bounds event ids, types and object ids: they are keys and
// headers, not content.
const maxIdentifier = 512

// lookup finds the catalogue entry of a type (*schemas.Catalogue).
type lookup interface {
	Lookup(kind, typ string) (*schemas.Entry, bool)
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
	if entry, ok := catalogue.Lookup(string(src.Kind), ev.Type); ok {
		pe.Entry = entry
		ev = entryPointers(ev, entry)
	}
	pe.locate(ev)
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
// has bounded the body's shape first (Shape).
func parseJSON(body []byte) (any, error) {
	var doc any
	rest, err := json.Parse(body, &doc, json.UseNumber)
	if err != nil {
		return nil, fmt.Errorf("body is not JSON: %w", err)
	}
	if len(rest) > 0 {
		return nil, errors.New("body is not JSON: data after the top-level value")
	}
	return doc, nil
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

// locate reads the object id and time where ev points. A known type that
// lacks either where its entry needs it gets a Problem: it is quarantined.
func (pe *providerEvent) locate(ev provider.Event) {
	if ev.ObjectIDPointer != "" {
		pe.ObjectID, _ = jsonptr.String(pe.doc, ev.ObjectIDPointer)
	}
	var timeErr error
	if ev.TimePointer != "" {
		pe.Time, timeErr = pointerTime(pe.doc, ev.TimePointer, ev.TimeFormat)
	}
	switch {
	case pe.Entry != nil && pe.ObjectID == "" && len(pe.Entry.ObjectIDVia) == 0:
		pe.Problem = fmt.Sprintf("%s: no object id at %s", pe.Type, ev.ObjectIDPointer)
	case pe.Entry != nil && timeErr != nil:
		pe.Problem = fmt.Sprintf("%s: %v", pe.Type, timeErr)
	}
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

// maxEventTime is the last second RFC 3339 can write (9999-12-31T23:59:59Z):
// the record's ce_time header and the inbox must hold the same instant.
var maxEventTime = time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)

// pointerTime reads a unix time (seconds), an RFC 3339 string, or either
// (schemas.TimeUnixOrRFC3339) at ptr: the zero time when absent (the schema
// says whether it may be), an error when present but unreadable or past
// what a record header can carry.
func pointerTime(doc any, ptr, format string) (time.Time, error) {
	s, ok := jsonptr.String(doc, ptr)
	if !ok {
		return time.Time{}, nil
	}
	if format == schemas.TimeRFC3339 || format == schemas.TimeUnixOrRFC3339 {
		t, err := time.Parse(time.RFC3339Nano, s)
		if err == nil {
			return t.UTC(), nil
		}
		if format == schemas.TimeRFC3339 {
			return time.Time{}, fmt.Errorf("event time at %s is not RFC 3339", ptr)
		}
	}
	unix, err := strconv.ParseInt(s, 10, 64)
	switch {
	case err != nil || unix < 0 || unix > maxEventTime.Unix():
		return time.Time{}, fmt.Errorf("event time at %s is not a unix time before year 10000", ptr)
	case unix == 0:
		return time.Time{}, nil
	}
	return time.Unix(unix, 0).UTC(), nil
}

// maxReason bounds a quarantine reason.
const maxReason = 2000

// storableText makes a message safe for a text column: valid UTF-8, no NUL,
// bounded. Schema errors may quote the offending value, which came from the
// sender.
func storableText(s string) string {
	s = strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "")
	if len(s) > maxReason {
		s = strings.ToValidUTF8(s[:maxReason], "")
	}
	return s
}
