package cdc

import (
	"sync"

	"github.com/jackc/pglogrepl"
)

// watermark tracks which transactions are fully acknowledged by Kafka and
// yields the LSN that is safe to confirm to Postgres: the end of the newest
// transaction such that it and every transaction before it had all of its
// records acknowledged. Nothing past an unacknowledged record is ever
// confirmed, so a crash replays it instead of losing it.
type watermark struct {
	mu        sync.Mutex
	txns      []*txn // in commit order, oldest first
	confirmed pglogrepl.LSN
	inflight  int
	acked     chan struct{} // signalled (non-blocking) on every ack
}

// txn is one source transaction (or heartbeat) in flight.
type txn struct {
	pending   int
	end       pglogrepl.LSN
	committed bool
}

func newWatermark(start pglogrepl.LSN) *watermark {
	return &watermark{confirmed: start, acked: make(chan struct{}, 1)}
}

// begin opens a transaction; its records are added with add.
func (w *watermark) begin() *txn {
	t := &txn{}
	w.mu.Lock()
	w.txns = append(w.txns, t)
	w.mu.Unlock()
	return t
}

// add counts one record of t as sent to Kafka.
func (w *watermark) add(t *txn) {
	w.mu.Lock()
	t.pending++
	w.inflight++
	w.mu.Unlock()
}

// ack marks one record of t as acknowledged (or parked) for good.
func (w *watermark) ack(t *txn) {
	w.mu.Lock()
	t.pending--
	w.inflight--
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
// as a heartbeat message: confirmable once everything before it is.
func (w *watermark) mark(lsn pglogrepl.LSN) {
	w.commit(w.begin(), lsn)
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
	}
	if i > 0 {
		w.txns = append(w.txns[:0], w.txns[i:]...)
	}
}

// position is the LSN safe to confirm, and how many records are in flight.
func (w *watermark) position() (pglogrepl.LSN, int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.confirmed, w.inflight
}
