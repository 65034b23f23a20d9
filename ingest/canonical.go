package ingest

import (
	"crypto/sha256"
	"encoding/binary"
	"hash"
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
	h := sha256.New()
	canonical(h, doc)
	return h.Sum(nil)
}

// bodyJSONSum is jsonSum of a body, nil when it is not JSON.
func bodyJSONSum(body []byte) []byte {
	doc, err := parseJSON(body)
	if err != nil {
		return nil
	}
	return jsonSum(doc)
}

func canonical(h hash.Hash, v any) {
	var n [binary.MaxVarintLen64]byte
	tagged := func(tag byte, s string) {
		h.Write([]byte{tag})
		h.Write(n[:binary.PutUvarint(n[:], uint64(len(s)))])
		h.Write([]byte(s))
	}
	switch v := v.(type) {
	case nil:
		h.Write([]byte{'z'})
	case bool:
		if v {
			h.Write([]byte{'t'})
		} else {
			h.Write([]byte{'f'})
		}
	case json.Number:
		tagged('n', string(v))
	case string:
		tagged('s', v)
	case []any:
		h.Write([]byte{'a'})
		h.Write(n[:binary.PutUvarint(n[:], uint64(len(v)))])
		for _, e := range v {
			canonical(h, e)
		}
	case map[string]any:
		h.Write([]byte{'o'})
		h.Write(n[:binary.PutUvarint(n[:], uint64(len(v)))])
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			tagged('k', k)
			canonical(h, v[k])
		}
	}
}
