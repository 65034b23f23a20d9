package envelope

import (
	"slices"
	"strings"

	"github.com/segmentio/encoding/json"
	"github.com/twmb/franz-go/pkg/kgo"
)

// OutboxHeaders is headers as the outbox stores them: a JSON object, keys
// sorted, the bytes json.Marshal gives a map, written without its
// reflection since every accepted event and every intent has them.
func OutboxHeaders(h map[string]string) []byte {
	var room [24]string // every header an envelope sets, on the stack
	keys := room[:0]
	size := 2
	for k, v := range h {
		keys = append(keys, k)
		size += len(k) + len(v) + 6
	}
	slices.Sort(keys)
	buf := append(make([]byte, 0, size+size/8), '{')
	for i, k := range keys {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = json.AppendEscape(buf, k, json.EscapeHTML)
		buf = append(buf, ':')
		buf = json.AppendEscape(buf, h[k], json.EscapeHTML)
	}
	return append(buf, '}')
}

// RecordHeaders turns headers as the outbox stores them into Kafka record
// headers, sorted by key so a record's bytes never depend on map order.
func RecordHeaders(h map[string]string) []kgo.RecordHeader {
	out := make([]kgo.RecordHeader, 0, len(h))
	for k, v := range h {
		out = append(out, kgo.RecordHeader{Key: k, Value: []byte(v)})
	}
	slices.SortFunc(out, func(a, b kgo.RecordHeader) int { return strings.Compare(a.Key, b.Key) })
	return out
}

// HeaderMap reads Kafka record headers back into the outbox's form. A key
// sent twice keeps its last value, as Kafka clients that read into maps do.
func HeaderMap(hs []kgo.RecordHeader) map[string]string {
	m := make(map[string]string, len(hs))
	for _, h := range hs {
		m[h.Key] = string(h.Value)
	}
	return m
}

// ParseRecord is Parse(HeaderMap(hs)) without the map, which every record a
// consumer reads paid for (the map and a string per header): the values it
// reads are copied into one string that the Event's fields share.
func ParseRecord(hs []kgo.RecordHeader) (Event, error) {
	var last [len(eventHeaders)]int // 1 + where in hs each header last occurs; 0: absent
	for i, h := range hs {
		if k := headerIndex(h.Key); k >= 0 {
			last[k] = i + 1
		}
	}
	size := 0
	for _, i := range last {
		if i > 0 {
			size += len(hs[i-1].Value)
		}
	}
	var b strings.Builder
	b.Grow(size)
	var ends [len(eventHeaders)]int
	for k, i := range last {
		if i > 0 {
			b.Write(hs[i-1].Value)
		}
		ends[k] = b.Len()
	}
	all := b.String()
	return parse(func(key string) string {
		k := headerIndex(key)
		if k < 0 {
			return ""
		}
		start := 0
		if k > 0 {
			start = ends[k-1]
		}
		return all[start:ends[k]]
	})
}

// headerIndex is key's place in eventHeaders, -1 for a key it lacks.
func headerIndex(key string) int {
	for i := range eventHeaders {
		if eventHeaders[i].key == key {
			return i
		}
	}
	return -1
}

// HeaderKey is b as a string: the constant for a header an Event sets (no
// allocation: the relay reads a dozen of them for every row), a copy for
// any other.
func HeaderKey(b []byte) string {
	for i := range eventHeaders {
		if string(b) == eventHeaders[i].key {
			return eventHeaders[i].key
		}
	}
	return string(b)
}
