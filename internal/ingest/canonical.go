package ingest

import (
	"crypto/sha256"
	"encoding/binary"
	"slices"

	"github.com/segmentio/encoding/json"
)

// jsonSum is the SHA-256 of a parsed JSON document's canonical form, stored
// beside the body's own hash (inbox.json_sha256) so a redelivery is judged
// by the rule sameJSON applies after the body itself is gone: two documents
// have the same sum exactly when they parse (numbers kept as written) to
// equal values, whatever their whitespace or key order. The form is
// self-delimiting (a tag and a length before every value), so no two values
// share one. doc is what parseJSON returned.
func jsonSum(doc any) []byte {
	// The form is built in one buffer and hashed once: written value by
	// value through hash.Hash, every small write allocated (this runs for
	// every accepted event).
	sum := sha256.Sum256(canonical(make([]byte, 0, 1024), doc))
	return sum[:]
}

// bodyJSONSum is jsonSum of a body, nil when it is not JSON.
func bodyJSONSum(body []byte) []byte {
	doc, err := parseJSON(body)
	if err != nil {
		return nil
	}
	return jsonSum(doc)
}

// canonical appends v's canonical form to buf.
func canonical(buf []byte, v any) []byte {
	tagged := func(buf []byte, tag byte, s string) []byte {
		buf = binary.AppendUvarint(append(buf, tag), uint64(len(s)))
		return append(buf, s...)
	}
	switch v := v.(type) {
	case nil:
		return append(buf, 'z')
	case bool:
		if v {
			return append(buf, 't')
		}
		return append(buf, 'f')
	case json.Number:
		return tagged(buf, 'n', string(v))
	case string:
		return tagged(buf, 's', v)
	case []any:
		buf = binary.AppendUvarint(append(buf, 'a'), uint64(len(v)))
		for _, e := range v {
			buf = canonical(buf, e)
		}
		return buf
	case map[string]any:
		buf = binary.AppendUvarint(append(buf, 'o'), uint64(len(v)))
		var room [16]string // most objects: the keys stay on the stack
		keys := room[:0]
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			buf = tagged(buf, 'k', k)
			buf = canonical(buf, v[k])
		}
		return buf
	}
	return buf
}
