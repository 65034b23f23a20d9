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

// detach copies the records' keys, values and header values into one buffer
// of their own. franz-go hands them out as slices of the decompressed fetch,
// and one record held back (a partition waiting for its turn) would keep a
// whole decompressed batch alive, ten times its compressed size for bodies
// like webhooks': memory would follow the fetches, not the budget.
func detach(recs []*kgo.Record, data int64) {
	buf := make([]byte, 0, data)
	keep := func(b []byte) []byte {
		if b == nil {
			return nil
		}
		buf = append(buf, b...)
		return buf[len(buf)-len(b) : len(buf) : len(buf)]
	}
	for _, r := range recs {
		r.Key, r.Value = keep(r.Key), keep(r.Value)
		for i := range r.Headers {
			r.Headers[i].Value = keep(r.Headers[i].Value)
		}
	}
}
