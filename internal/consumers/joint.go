package consumers

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// joint lets the batches of a group's partitions share a transaction. A
// partition's worker applies what it holds as soon as the group has no
// transaction open, so an idle pipeline pays no wait; while one is open,
// the batches that become ready wait together and go into the next one.
// Under load a transaction then carries many partitions' records for one
// BEGIN, one handler pass and one COMMIT (its WAL flush), instead of a few
// records each: batches grow with the load and shrink with it.
//
// The group's other transactions (up to Transactions) open only for a
// backlog, a share grown to an eighth of its limits, or when the open one
// is slow (a share waited SharePatience for it): a backlog is applied in
// parallel, and a transaction waiting on a lock does not hold the group's
// other partitions up for long.
//
// Only a batch's first attempt is shared. A shared transaction that fails
// is nobody's attempt: each member applies its batch alone, under its own
// partition's failure policy, as if it had never been shared.
type joint struct {
	applier    applier
	tracing    tracing
	metrics    *metrics
	first      chan struct{} // the group's one transaction under live load
	more       chan struct{} // the others, for a backlog or a slow first; nil: none
	patience   time.Duration
	maxRecords int
	maxBytes   int64

	mu      sync.Mutex
	forming *share // waiting for a transaction, open to more batches
}

// share is one transaction's worth of batches.
type share struct {
	entries []entry
	bytes   int64
	members int           // batches, one per partition
	big     chan struct{} // closed once the share is a backlog's
	done    chan struct{}
	err     error
}

func newJoint(a applier, t tracing, m *metrics, transactions int, patience time.Duration, maxRecords int, maxBytes int64) *joint {
	j := &joint{applier: a, tracing: t, metrics: m, first: make(chan struct{}, 1), patience: patience,
		maxRecords: maxRecords, maxBytes: maxBytes}
	if transactions > 1 {
		j.more = make(chan struct{}, transactions-1)
	}
	return j
}

// apply commits entries, already prepared, in a transaction shared with
// other partitions' batches, and says how it went; an error means nothing
// of the share was committed.
func (j *joint) apply(entries []entry, bytes int64) error {
	j.metrics.waiting.Inc()
	j.mu.Lock()
	if s := j.forming; s != nil && len(s.entries)+len(entries) <= j.maxRecords && s.bytes+bytes <= j.maxBytes {
		j.add(s, entries, bytes)
		j.mu.Unlock()
		<-s.done
		return s.err
	}
	// A share that is full waits for its transaction as it is; this batch
	// starts the next one.
	s := &share{big: make(chan struct{}), done: make(chan struct{})}
	j.add(s, entries, bytes)
	j.forming = s
	j.mu.Unlock()

	slot := j.transaction(s)
	j.mu.Lock()
	if j.forming == s {
		j.forming = nil
	}
	members := s.members // complete: no batch joins a share no longer forming
	j.mu.Unlock()
	j.metrics.waiting.Sub(float64(members))
	s.err = j.commit(s)
	<-slot
	close(s.done)
	return s.err
}

// transaction waits for a transaction for s and returns its slot, to be
// released when it ends: the group's first, or another once s is a
// backlog's or has waited patience.
func (j *joint) transaction(s *share) chan struct{} {
	select { // an idle group's batch: no timer
	case j.first <- struct{}{}:
		return j.first
	default:
	}
	patience := time.NewTimer(j.patience)
	defer patience.Stop()
	select {
	case j.first <- struct{}{}:
		return j.first
	case <-s.big:
	case <-patience.C:
	}
	select {
	case j.first <- struct{}{}:
		return j.first
	case j.more <- struct{}{}: // never, when nil
		return j.more
	}
}

// add puts a batch's entries in s (under mu).
func (j *joint) add(s *share, entries []entry, bytes int64) {
	s.add(entries, bytes)
	if len(s.entries) >= j.maxRecords/8 || s.bytes >= j.maxBytes/8 {
		select {
		case <-s.big:
		default:
			close(s.big)
		}
	}
}

func (s *share) add(entries []entry, bytes int64) {
	if s.entries == nil {
		// Alone, as most shares of an idle or draining group are, it
		// applies its only batch's entries without a copy; a second
		// member's append then copies them into a slice of the share's own.
		s.entries = slices.Clip(entries)
	} else {
		s.entries = append(s.entries, entries...)
	}
	s.bytes += bytes
	s.members++
}

// commit runs the share's transaction. The transaction is not bound to any
// member's life: like a batch of one partition, once begun it finishes.
func (j *joint) commit(s *share) error {
	start := time.Now()
	ctx, span := j.tracing.startBatch(s.entries, 1)
	err := j.applier.transact(ctx, s.entries, false, func(context.Context, pgx.Tx) error { return nil })
	EndSpan(span, err)
	if err != nil {
		j.metrics.sharedFailed.Inc()
		return err
	}
	j.metrics.committed(time.Since(start), len(s.entries), s.members)
	return nil
}
