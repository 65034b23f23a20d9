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
	var last [headerCount]int // 1 + where in hs each header last occurs; 0: absent
	size := 0
	for i := range hs {
		if k := headerIndex(hs[i].Key); k >= 0 {
			if j := last[k]; j > 0 {
				size -= len(hs[j-1].Value)
			}
			last[k] = i + 1
			size += len(hs[i].Value)
		}
	}
	var b strings.Builder
	b.Grow(size)
	var ends [headerCount]int
	for k, i := range last {
		if i > 0 {
			b.Write(hs[i-1].Value)
		}
		ends[k] = b.Len()
	}
	all := b.String()
	var vals headerValues
	start := 0
	for k, end := range ends {
		vals[k] = all[start:end]
		start = end
	}
	return parse(&vals)
}

// headerIndex is key's place in eventHeaders, -1 for a key it lacks: a
// switch, which the compiler turns into a search by length and bytes,
// where a loop compared a record's every header with most of the sixteen.
func headerIndex(key string) int {
	if rest, ok := strings.CutPrefix(key, "ce_"); ok {
		return cloudEventsIndex(rest)
	}
	switch key {
	case HeaderContentType:
		return iContentType
	case HeaderClaim:
		return iClaim
	case HeaderInboxID:
		return iInboxID
	case HeaderRecovered:
		return iRecovered
	case HeaderTraceParent:
		return iTraceParent
	}
	return -1
}

// cloudEventsIndex is headerIndex of "ce_" + name, the names written out
// (constant cases, searched by length and bytes; TestHeaderIndexIsThePlace
// holds them to the constants).
func cloudEventsIndex(name string) int {
	switch name {
	case "apiversion": // HeaderAPIVersion
		return iAPIVersion
	case "dataschema": // HeaderDataSchema
		return iDataSchema
	case "id": // HeaderID
		return iID
	case "partitionkey": // HeaderPartitionKey
		return iPartitionKey
	case "source": // HeaderSource
		return iSource
	case "sourceaccount": // HeaderSourceAccount
		return iSourceAccount
	case "specversion": // HeaderSpecVersion
		return iSpecVersion
	case "subject": // HeaderSubject
		return iSubject
	case "tenantid": // HeaderTenantID
		return iTenantID
	case "time": // HeaderTime
		return iTime
	case "type": // HeaderType
		return iType
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
