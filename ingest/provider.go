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
	// segmentio's parser accepts and refuses what encoding/json does, at
	// under half the cost into an any: a tenth of ingest's CPU was here.
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
	if timePtr != "" {
		pe.Time = pointerTime(doc, timePtr, timeFormat)
	}
	if pe.Entry != nil && pe.ObjectID == "" && len(pe.Entry.ObjectIDVia) == 0 {
		pe.Problem = fmt.Sprintf("%s: no object id at %s", pe.Type, objectPtr)
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
func checkIdentifiers(ids ...string) error {
	for _, id := range ids {
		if len(id) > maxIdentifier || !utf8.ValidString(id) || strings.ContainsRune(id, 0) {
			return errors.New("event id, type or object id is not a short UTF-8 string")
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

// pointerTime reads a unix time (seconds), an RFC 3339 string, or either
// (schemas.TimeUnixOrRFC3339) at ptr; the zero time when absent or
// unreadable (the schema says whether it matters).
func pointerTime(doc any, ptr, format string) time.Time {
	s, ok := pointerString(doc, ptr)
	if !ok {
		return time.Time{}
	}
	if format == schemas.TimeRFC3339 || format == schemas.TimeUnixOrRFC3339 {
		t, err := time.Parse(time.RFC3339Nano, s)
		if err == nil {
			return t.UTC()
		}
		if format == schemas.TimeRFC3339 {
			return time.Time{}
		}
	}
	unix, err := strconv.ParseInt(s, 10, 64)
	if err != nil || unix <= 0 {
		return time.Time{}
	}
	return time.Unix(unix, 0).UTC()
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
