package kafka

import "github.com/twmb/franz-go/pkg/kgo"

// RecordSize is what a record costs in memory while a stage holds it (the
// relay until Kafka acknowledged it, a consumer until its batch is applied):
// its key, value and headers, and the structures that carry them (about
// 250 bytes a record and 50 a header), which for small events weigh as much
// as the bytes themselves. Bounds on held bytes count with it.
func RecordSize(rec *kgo.Record) int64 {
	n := int64(recordOverhead + len(rec.Key) + len(rec.Value))
	for _, h := range rec.Headers {
		n += int64(headerOverhead + len(h.Key) + len(h.Value))
	}
	return n
}

const (
	recordOverhead = 256
	headerOverhead = 48
)
