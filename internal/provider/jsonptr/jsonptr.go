// Package jsonptr resolves RFC 6901 JSON pointers in a document parsed into
// Go values (maps, slices, strings, json.Number). A pointer that does not
// resolve is an absent value, never an error: what must be present is the
// schema's to say.
package jsonptr

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/segmentio/encoding/json"

	"github.com/sluicehq/sluice/schemas"
)

// Get resolves ptr in doc.
func Get(doc any, ptr string) (any, bool) {
	if ptr == "" {
		return doc, true
	}
	if !strings.HasPrefix(ptr, "/") {
		return nil, false
	}
	// Token by token without splitting: this runs several times for every
	// event, and most pointers have no escapes.
	cur, rest := doc, ptr[1:]
	for {
		tok, more, found := strings.Cut(rest, "/")
		if strings.IndexByte(tok, '~') >= 0 {
			tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		}
		next, ok := step(cur, tok)
		if !ok {
			return nil, false
		}
		if !found {
			return next, true
		}
		cur, rest = next, more
	}
}

func step(cur any, tok string) (any, bool) {
	switch v := cur.(type) {
	case map[string]any:
		next, ok := v[tok]
		return next, ok
	case []any:
		i, err := strconv.Atoi(tok)
		if err != nil || i < 0 || i >= len(v) {
			return nil, false
		}
		return v[i], true
	default:
		return nil, false
	}
}

// String reads a string, or a number as written, at ptr.
func String(doc any, ptr string) (string, bool) {
	v, ok := Get(doc, ptr)
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

// MaxTime is the last second RFC 3339 can write (9999-12-31T23:59:59Z):
// the record's ce_time header and the inbox must hold the same instant.
var MaxTime = time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)

// Time reads a unix time (seconds), an RFC 3339 string, or either
// (schemas.TimeUnixOrRFC3339) at ptr: the zero time when absent (the schema
// says whether it may be), an error when present but unreadable or past
// what a record header can carry.
func Time(doc any, ptr, format string) (time.Time, error) {
	s, ok := String(doc, ptr)
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
	case err != nil || unix < 0 || unix > MaxTime.Unix():
		return time.Time{}, fmt.Errorf("event time at %s is not a unix time before year 10000", ptr)
	case unix == 0:
		return time.Time{}, nil
	}
	return time.Unix(unix, 0).UTC(), nil
}
