package cdc

import (
	"sync"
	"time"

	"github.com/jackc/pglogrepl"
)

// watermark tracks which transactions are fully acknowledged by Kafka and
// yields the LSN that is safe to confirm to Postgres: the end of the newest
// transaction such that it and every transaction before it had all of its
// records acknowledged. Nothing past an unacknowledged record is ever
// confirmed, so a crash replays it instead of losing it.
type watermark struct {
	mu          sync.Mutex
	txns        []*txn // in commit order, oldest first
	confirmed   pglogrepl.LSN
	confirmedAt time.Time
	inflight    int
	bytes       int
	acked       chan struct{} // signalled (non-blocking) on every ack
}

// txn is one source transaction (or heartbeat) in flight.
type txn struct {
	pending   int
	end       pglogrepl.LSN
	at        time.Time // commit time; zero when unknown
	committed bool
}

// progress is a consistent snapshot of the watermark.
type progress struct {
	// confirmed is the LSN safe to confirm; confirmedAt the commit time of
	// the newest transaction (or heartbeat) at or below it.
	confirmed   pglogrepl.LSN
	confirmedAt time.Time
	// inflight and bytes count records sent to Kafka and not acknowledged.
	inflight, bytes int
	// oldest is the commit time of the oldest transaction read but not yet
	// confirmable; zero when everything read is confirmable.
	oldest time.Time
	// idle is true when every transaction read is confirmable.
	idle bool
}

func newWatermark(start pglogrepl.LSN) *watermark {
	return &watermark{confirmed: start, acked: make(chan struct{}, 1)}
}

// begin opens a transaction committed at commitTime; its records are added
// with add.
func (w *watermark) begin(commitTime time.Time) *txn {
	t := &txn{at: commitTime}
	w.mu.Lock()
	w.txns = append(w.txns, t)
	w.mu.Unlock()
	return t
}

// add counts one record of t, of size bytes, as sent to Kafka.
func (w *watermark) add(t *txn, size int) {
	w.mu.Lock()
	t.pending++
	w.inflight++
	w.bytes += size
	w.mu.Unlock()
}

// ack marks one record of t, of size bytes, as acknowledged (or parked) for
// good.
func (w *watermark) ack(t *txn, size int) {
	w.mu.Lock()
	t.pending--
	w.inflight--
	w.bytes -= size
	w.advance()
	w.mu.Unlock()
	select {
	case w.acked <- struct{}{}:
	default:
	}
}

// commit closes t at the end LSN of its commit record.
func (w *watermark) commit(t *txn, end pglogrepl.LSN) {
	w.mu.Lock()
	t.end, t.committed = end, true
	w.advance()
	w.mu.Unlock()
}

// mark records a position reached in the stream with nothing to send, such
// as a heartbeat message: confirmable once everything before it is. at is
// the time up to which commits are known to be at or below lsn (zero when
// unknown).
func (w *watermark) mark(lsn pglogrepl.LSN, at time.Time) {
	w.commit(w.begin(at), lsn)
}

func (w *watermark) advance() {
	i := 0
	for ; i < len(w.txns); i++ {
		t := w.txns[i]
		if !t.committed || t.pending > 0 {
			break
		}
		if t.end > w.confirmed {
			w.confirmed = t.end
		}
		if t.at.After(w.confirmedAt) {
			w.confirmedAt = t.at
		}
	}
	if i > 0 {
		clear(w.txns[:i]) // let acknowledged transactions be collected
		w.txns = append(w.txns[:0], w.txns[i:]...)
	}
}

// position is the LSN safe to confirm, and how many records are in flight.
func (w *watermark) position() (pglogrepl.LSN, int) {
	p := w.progress()
	return p.confirmed, p.inflight
}

func (w *watermark) progress() progress {
	w.mu.Lock()
	defer w.mu.Unlock()
	p := progress{confirmed: w.confirmed, confirmedAt: w.confirmedAt, inflight: w.inflight, bytes: w.bytes, idle: len(w.txns) == 0}
	if len(w.txns) > 0 {
		p.oldest = w.txns[0].at
	}
	return p
}
