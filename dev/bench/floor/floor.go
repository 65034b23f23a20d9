// Package floor holds the cost ladder's floors: for each stage of the
// pipeline, a minimal program that does the stage's mandatory work and
// nothing else, so that the bench can read Sluice's CPU per event against
// it (docs/performance.md, "Cost ladder"). A floor imports no Sluice
// package (the bench's TestFloorsImportNoSluicePackage holds that): what it
// shares with Sluice is the database schema and the record format, written
// out here again.
package floor

import (
	"encoding/binary"
	"slices"

	"github.com/segmentio/encoding/json"
)

// jsonSum appends the self-delimiting canonical form of a parsed document
// (a tag and a length before every value, object keys sorted) to buf: what
// a redelivery re-serialised with other whitespace or key order is judged
// by once its body is gone, so the floor stores it as Sluice does.
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
		var room [16]string
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
