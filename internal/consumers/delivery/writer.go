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
	rulesVersion               int64 // of the rules the send used; 0: unknown
}

// writer records the 2xx outcomes of every loop, many in one statement:
// the success path's only write, with the endpoints' figures per minute
// (figures.go). A delivery's next of its key does not wait for it: a
// receiver's first receipts stay in order even when a crash loses the
// write and both are sent again.
type writer struct {
	d       *Deliverer
	in      chan written
	figures *figures
}

// writerBatch is the most outcomes one statement records.
const writerBatch = 512

func newWriter(d *Deliverer) *writer {
	return &writer{d: d, in: make(chan written, 4*writerBatch), figures: newFigures()}
}

func (w *writer) add(o written) { w.in <- o }

// run writes until in is closed, then writes what is left, figures
// included; figures due while no outcome comes are written alone.
func (w *writer) run() {
	batch := make([]written, 0, writerBatch)
	tick := time.NewTicker(figuresEvery)
	defer tick.Stop()
	for {
		select {
		case o, ok := <-w.in:
			if !ok {
				w.flush(nil, true)
				return
			}
			batch = w.gather(append(batch[:0], o))
			w.flush(batch, false)
		case <-tick.C:
			w.flush(nil, false)
		}
	}
}

// gather adds to batch what waits in in, up to writerBatch.
func (w *writer) gather(batch []written) []written {
	for len(batch) < writerBatch {
		select {
		case o, ok := <-w.in:
			if !ok {
				return batch
			}
			batch = append(batch, o)
		default:
			return batch
		}
	}
	return batch
}

// flush records batch and the figures due (all of them when last), trying
// again for about three seconds when Postgres is away; then, written or
// not, the loops stop treating its deliveries as settling (one not written
// is pending still: the mark's next check finds it, and it is sent again).
// Figures not written are added to the next write's.
func (w *writer) flush(batch []written, last bool) {
	figs := w.figures.take(time.Now(), last)
	if len(batch) == 0 && len(figs) == 0 {
		return
	}
	n := len(batch)
	ids, statuses, latencies, attempts, ats := make([]int64, n), make([]int32, n), make([]int32, n), make([]int32, n), make([]time.Time, n)
	versions := make([]int64, n)
	for i, o := range batch {
		ids[i], statuses[i], latencies[i], attempts[i], ats[i] = o.id, int32(o.status), int32(o.latencyMS), int32(o.attempt), o.at
		versions[i] = o.rulesVersion
	}
	var rows *string
	if js := figs.json(); js != nil {
		s := string(js)
		rows = &s
	}
	wait := 100 * time.Millisecond
	for try := 1; ; try++ {
		_, err := w.d.pool.Exec(context.Background(), deliveredSQL, ids, statuses, latencies, attempts, ats, rows, versions)
		if err == nil {
			break
		}
		if try == recordTries {
			w.d.log.Warn("record deliveries", slog.String("event", "delivery.record_failed"), slog.Int("deliveries", n),
				slog.Int("tries", try), slog.Any("error", err))
			w.figures.putBack(figs)
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
