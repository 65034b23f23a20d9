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

	"github.com/sluicehq/sluice/ingest/signature"
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

// HMACSettings is a generic HMAC source's configuration: the scheme, and
// where the event id and type are found. A locator is "header:<Name>" or a
// JSON pointer into the body ("/id").
type HMACSettings struct {
	signature.HMACConfig
	EventID   string `json:"eventId"`
	EventType string `json:"eventType"`
	// ObjectID and EventTime are JSON pointers, used when the catalogue
	// entry for the type names none.
	ObjectID        string `json:"objectId,omitempty"`
	EventTime       string `json:"eventTime,omitempty"`
	EventTimeFormat string `json:"eventTimeFormat,omitempty"` // unix (default) or rfc3339
}

// Validate reports settings that could never authenticate or read an event.
func (h HMACSettings) Validate() error {
	if err := h.HMACConfig.Validate(); err != nil {
		return err
	}
	for name, loc := range map[string]string{"eventId": h.EventID, "eventType": h.EventType} {
		if !strings.HasPrefix(loc, "header:") && !strings.HasPrefix(loc, "/") {
			return fmt.Errorf("hmac: %s must be header:<Name> or a JSON pointer like /id, not %q", name, loc)
		}
	}
	switch h.EventTimeFormat {
	case "", "unix", "rfc3339":
	default:
		return fmt.Errorf("hmac: eventTimeFormat must be unix or rfc3339, not %q", h.EventTimeFormat)
	}
	return nil
}

func (h HMACSettings) verifier(tolerance time.Duration) (signature.Verifier, error) {
	if err := h.Validate(); err != nil {
		return nil, err
	}
	return signature.NewHMAC(h.HMACConfig, tolerance)
}

// lookup finds the catalogue entry of a type (*schemas.Catalogue).
type lookup interface {
	Lookup(kind, typ string) (*schemas.Entry, bool)
}

// readEvent extracts the event fields of an authenticated body, following
// the source kind's conventions; the catalogue entry's pointers, when it has
// them, say where the object id and event time are instead.
func readEvent(src *source, h http.Header, body []byte, catalogue lookup) (providerEvent, error) {
	// segmentio's parser costs under half of encoding/json's into an any (a
	// tenth of ingest's CPU was here); it has no depth limit, so the caller
	// has bounded the body's shape first (Shape).
	var doc any
	rest, err := json.Parse(body, &doc, json.UseNumber)
	if err != nil {
		return providerEvent{}, fmt.Errorf("body is not JSON: %w", err)
	}
	if len(rest) > 0 {
		return providerEvent{}, errors.New("body is not JSON: data after the top-level value")
	}
	var (
		pe                  = providerEvent{doc: doc}
		timePtr, timeFormat string
		objectPtr           string
	)
	switch src.Kind {
	case "stripe":
		pe.ID, _ = pointerString(doc, "/id")
		pe.Type, _ = pointerString(doc, "/type")
		pe.ObjectType, _ = pointerString(doc, "/data/object/object")
		pe.APIVersion, _ = pointerString(doc, "/api_version")
		objectPtr, timePtr, timeFormat = "/data/object/id", "/created", "unix"
	case "github":
		pe.ID = h.Get("X-GitHub-Delivery")
		pe.Type = h.Get("X-GitHub-Event")
		if action, ok := pointerString(doc, "/action"); ok && action != "" && pe.Type != "" {
			pe.Type += "." + action
		}
	case "standard_webhooks":
		pe.ID = h.Get(signature.StandardIDHeader)
		pe.Type, _ = pointerString(doc, "/type")
		objectPtr, timePtr, timeFormat = "/data/id", "/timestamp", "rfc3339"
	case "hmac":
		f := src.Fields
		pe.ID = locate(f.EventID, h, doc)
		pe.Type = locate(f.EventType, h, doc)
		objectPtr, timePtr, timeFormat = f.ObjectID, f.EventTime, f.EventTimeFormat
	default:
		return providerEvent{}, fmt.Errorf("source kind %q has no webhook format", src.Kind)
	}
	if pe.ID == "" || pe.Type == "" {
		return providerEvent{}, errNoEventID
	}
	if entry, ok := catalogue.Lookup(src.Kind, pe.Type); ok {
		pe.Entry = entry
		if entry.ObjectIDPointer != "" {
			objectPtr = entry.ObjectIDPointer
		}
		if entry.EventTimePointer != "" {
			timePtr, timeFormat = entry.EventTimePointer, entry.EventTimeFormat
		}
	}
	if objectPtr != "" {
		pe.ObjectID, _ = pointerString(doc, objectPtr)
	}
	var timeErr error
	if timePtr != "" {
		pe.Time, timeErr = pointerTime(doc, timePtr, timeFormat)
	}
	switch {
	case pe.Entry != nil && pe.ObjectID == "" && len(pe.Entry.ObjectIDVia) == 0:
		pe.Problem = fmt.Sprintf("%s: no object id at %s", pe.Type, objectPtr)
	case pe.Entry != nil && timeErr != nil:
		pe.Problem = fmt.Sprintf("%s: %v", pe.Type, timeErr)
	}
	if checkIdentifiers(pe.APIVersion) != nil {
		pe.APIVersion = "" // informative only: not worth refusing the event for
	}
	if err := checkIdentifiers(pe.ID, pe.Type, pe.ObjectID, pe.ObjectType); err != nil {
		return providerEvent{}, err
	}
	return pe, nil
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

// locate reads a configured locator: "header:<Name>" or a JSON pointer.
func locate(loc string, h http.Header, doc any) string {
	if name, ok := strings.CutPrefix(loc, "header:"); ok {
		return h.Get(name)
	}
	s, _ := pointerString(doc, loc)
	return s
}

// pointer resolves an RFC 6901 JSON pointer.
func pointer(doc any, ptr string) (any, bool) {
	if ptr == "" {
		return doc, true
	}
	if !strings.HasPrefix(ptr, "/") {
		return nil, false
	}
	cur := doc
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch v := cur.(type) {
		case map[string]any:
			next, ok := v[tok]
			if !ok {
				return nil, false
			}
			cur = next
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(v) {
				return nil, false
			}
			cur = v[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// pointerString reads a string or a number (as written) at ptr.
func pointerString(doc any, ptr string) (string, bool) {
	v, ok := pointer(doc, ptr)
	if !ok {
		return "", false
	}
	switch v := v.(type) {
	case string:
		return v, true
	case json.Number:
		return v.String(), true
	}
	return "", false
}

// maxEventTime is the last second RFC 3339 can write (9999-12-31T23:59:59Z):
// the record's ce_time header and the inbox must hold the same instant.
var maxEventTime = time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)

// pointerTime reads a unix time (seconds), an RFC 3339 string, or either
// (schemas.TimeUnixOrRFC3339) at ptr: the zero time when absent (the schema
// says whether it may be), an error when present but unreadable or past
// what a record header can carry.
func pointerTime(doc any, ptr, format string) (time.Time, error) {
	s, ok := pointerString(doc, ptr)
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
