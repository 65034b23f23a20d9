package delivery

import (
	"context"
	"log/slog"
	"time"
)

// written is one 2xx to record.
type written struct {
	loop                       *loop
	id                         int64
	status, latencyMS, attempt int
	at                         time.Time
}

// writer records the 2xx outcomes of every loop, many in one statement:
// the success path's only write. A delivery's next of its key does not
// wait for it: a receiver's first receipts stay in order even when a
// crash loses the write and both are sent again.
type writer struct {
	d  *Deliverer
	in chan written
}

// writerBatch is the most outcomes one statement records.
const writerBatch = 512

func newWriter(d *Deliverer) *writer { return &writer{d: d, in: make(chan written, 4*writerBatch)} }

func (w *writer) add(o written) { w.in <- o }

// run writes until in is closed, then writes what is left.
func (w *writer) run() {
	batch := make([]written, 0, writerBatch)
	for o := range w.in {
		batch = append(batch[:0], o)
	gather:
		for len(batch) < writerBatch {
			select {
			case o, ok := <-w.in:
				if !ok {
					break gather
				}
				batch = append(batch, o)
			default:
				break gather
			}
		}
		w.flush(batch)
	}
}

// flush records batch, trying again for about three seconds when Postgres
// is away; then, written or not, the loops stop treating its deliveries as
// settling (one not written is pending still, and is sent again when read).
func (w *writer) flush(batch []written) {
	n := len(batch)
	ids, statuses, latencies, attempts, ats := make([]int64, n), make([]int32, n), make([]int32, n), make([]int32, n), make([]time.Time, n)
	for i, o := range batch {
		ids[i], statuses[i], latencies[i], attempts[i], ats[i] = o.id, int32(o.status), int32(o.latencyMS), int32(o.attempt), o.at
	}
	wait := 100 * time.Millisecond
	for try := 1; ; try++ {
		_, err := w.d.pool.Exec(context.Background(), deliveredSQL, ids, statuses, latencies, attempts, ats)
		if err == nil {
			break
		}
		if try == recordTries {
			w.d.log.Warn("record deliveries", slog.String("event", "delivery.record_failed"), slog.Int("deliveries", n),
				slog.Int("tries", try), slog.Any("error", err))
			break
		}
		time.Sleep(wait)
		wait *= 2
	}
	byLoop := map[*loop][]int64{}
	for _, o := range batch {
		byLoop[o.loop] = append(byLoop[o.loop], o.id)
	}
	for l, ids := range byLoop {
		l.settled(ids)
	}
}
