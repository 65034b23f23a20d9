package consumers

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/sluicehq/sluice/internal/kafka"
	"github.com/twmb/franz-go/pkg/kgo"
)

// budget bounds the bytes of records a group holds: fetched and queued at
// its workers or in a batch being applied. Per-partition limits alone let
// memory grow with the number of partitions a member owns while a backlog
// drains; the group's limit holds whatever the assignment. A partition that
// would take the group past it is paused and waits here until applied
// batches give bytes back.
type budget struct {
	limit int64
	gauge prometheus.Gauge

	mu      sync.Mutex
	held    int64
	waiting []*worker // paused for the group's sake, resumed on release
}

func (b *budget) add(n int64) {
	b.mu.Lock()
	b.held += n
	b.gauge.Set(float64(b.held))
	b.mu.Unlock()
}

func (b *budget) over() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.held >= b.limit
}

// room says whether a paused partition may be fetched again.
func (b *budget) room() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.roomLocked()
}

// roomLocked: resumed partitions are fetched together, which can take the
// group past its limit by a fetch, so there must be room for one.
func (b *budget) roomLocked() bool { return b.held < b.limit*3/4 }

// wait registers a paused worker to be offered a resume on release.
func (b *budget) wait(w *worker) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, o := range b.waiting {
		if o == w {
			return
		}
	}
	b.waiting = append(b.waiting, w)
}

// release gives n bytes back and, once well under the limit, lets the
// waiting workers ask for their partitions again.
func (b *budget) release(n int64) {
	b.mu.Lock()
	b.held -= n
	b.gauge.Set(float64(b.held))
	var wake []*worker
	if b.roomLocked() {
		wake, b.waiting = b.waiting, nil
	}
	b.mu.Unlock()
	for _, w := range wake {
		w.maybeResume()
	}
}

// recordBytes is what records cost while held, as the relay counts its
// in-flight records too (kafka.RecordSize); data is the part detach copies.
func recordBytes(recs []*kgo.Record) (held, data int64) {
	for _, r := range recs {
		held += kafka.RecordSize(r)
		data += int64(len(r.Key) + len(r.Value))
		for _, h := range r.Headers {
			data += int64(len(h.Value))
		}
	}
	return held, data
}

// detach copies the records into a slab of their own, with their keys,
// values and header values in one buffer of their own, and gives the
// fetched records back to franz-go (Recycle) for the next fetch. franz-go
// hands records out as slices of the decompressed fetch, and one record
// held back (a partition waiting for its turn) would keep a whole
// decompressed batch alive, ten times its compressed size for bodies like
// webhooks': memory would follow the fetches, not the budget. Given back,
// the fetch's buffers are decompressed into again (fetchPool) instead of
// being garbage the collector must find: they were a fifth of what a
// backlog's consumers allocated. recs are not to be used afterwards.
func detach(recs []*kgo.Record, data int64) []*kgo.Record {
	buf := make([]byte, 0, data)
	keep := func(b []byte) []byte {
		if b == nil {
			return nil
		}
		buf = append(buf, b...)
		return buf[len(buf)-len(b) : len(buf) : len(buf)]
	}
	own := make([]kgo.Record, len(recs))
	out := make([]*kgo.Record, len(recs))
	for i, r := range recs {
		own[i] = *r
		c := &own[i]
		c.Key, c.Value = keep(r.Key), keep(r.Value)
		// The header slice is the record's own (franz-go makes one per
		// record); only its values point into the fetch.
		for j := range c.Headers {
			c.Headers[j].Value = keep(c.Headers[j].Value)
		}
		// The copy keeps the record's context, which holds its receive
		// span when tracing is on (tracing.go); it is never recycled.
		r.Recycle()
		out[i] = c
	}
	return out
}

// fetchPool gives franz-go back the buffers it decompresses fetches into
// and the slabs it decodes records into, once detach copied the records
// out (kgo.WithPools). A group has one; sync.Pool lets go of what a quieter
// group no longer needs at the next collections.
type fetchPool struct {
	bytes, records sync.Pool
}

var (
	_ kgo.PoolDecompressBytes = (*fetchPool)(nil)
	_ kgo.PoolRecords         = (*fetchPool)(nil)
)

// GetDecompressBytes returns a buffer of any capacity: franz-go grows one
// too small and puts the grown one back.
func (p *fetchPool) GetDecompressBytes([]byte, kgo.CompressionCodecType) []byte {
	if b, ok := p.bytes.Get().(*[]byte); ok {
		return *b
	}
	return nil
}

func (p *fetchPool) PutDecompressBytes(b []byte) { p.bytes.Put(&b) }

func (p *fetchPool) GetRecords(n int) []kgo.Record {
	if r, ok := p.records.Get().(*[]kgo.Record); ok && cap(*r) >= n {
		return (*r)[:0]
	}
	return make([]kgo.Record, 0, n)
}

func (p *fetchPool) PutRecords(r []kgo.Record) { p.records.Put(&r) }
