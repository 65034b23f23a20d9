// Package jsonptr resolves RFC 6901 JSON pointers in a document parsed into
// Go values (maps, slices, strings, json.Number). A pointer that does not
// resolve is an absent value, never an error: what must be present is the
// schema's to say.
package jsonptr

import (
	"strconv"
	"strings"

	"github.com/segmentio/encoding/json"
)

// Get resolves ptr in doc.
func Get(doc any, ptr string) (any, bool) {
	if ptr == "" {
		return doc, true
	}
	if !strings.HasPrefix(ptr, "/") {
		return nil, false
	}
	cur := doc
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		next, ok := step(cur, tok)
		if !ok {
			return nil, false
		}
		cur = next
	}
	return cur, true
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
