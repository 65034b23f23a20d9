package envelope

import (
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"
)

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
