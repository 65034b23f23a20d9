package consumers

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicehq/sluice/internal/envelope"
)

// Records set aside. A record whose effect needs what another transaction
// holds (a balance row an operator locked, a long report's lock) would hold
// its partition, every tenant's records behind it, for as long as that lock
// lasts; a resource written by records of many keys (a workspace's balance,
// written by each of its invoices) would meet the lock on every partition.
// Instead the handler names such records (Blocked), and the runtime sets
// them aside: written to consumer_waiting in the transaction that applies
// the rest of the batch, so the offset moves past them, and every later
// record of their key on the partition follows them there, so a key's
// effects keep their order. The partition's worker retries what waits, in
// offset order, between its batches, backing off while it stays blocked;
// a retry deletes the rows it applied or dead-lettered in its own
// transaction. Effects stay exactly once: a record is applied in the
// transaction that deletes its row, and a row written twice (a rewind, a
// new owner consuming the record again) stays one row.

var (
	//go:embed sql/waiting_set_aside.sql
	waitingSetAsideSQL string
	//go:embed sql/waiting_take.sql
	waitingTakeSQL string
	//go:embed sql/waiting_keys.sql
	waitingKeysSQL string
	//go:embed sql/waiting_done.sql
	waitingDoneSQL string
)

// blockedError names the records a handler cannot apply now.
type blockedError struct {
	err  error
	recs []*kgo.Record
}

func (e blockedError) Error() string { return e.err.Error() }
func (e blockedError) Unwrap() error { return e.err }

// Blocked says err is a wait on something held elsewhere (a row another
// transaction locked) that recs need and the rest of the batch does not.
// The runtime rolls the transaction back and applies the batch again with
// recs, and every later record of their keys, set aside; they are applied
// once a retry finds them free. A Batch returns it from Apply or Settle;
// naming no record of the batch, it is a transient failure like any other.
func Blocked(err error, recs ...*kgo.Record) error {
	if err == nil {
		return nil
	}
	return blockedError{err: err, recs: recs}
}

// blockedRecords are the records a Blocked error in err names.
func blockedRecords(err error) []*kgo.Record {
	var b blockedError
	if errors.As(err, &b) {
		return b.recs
	}
	return nil
}

// waiting is why an entry is set aside, and since when.
type waiting struct {
	reason   string
	since    time.Time
	attempts int
}

// Waiting limits: the first retry follows quickly (a lock of a moment), the
// pause doubles while nothing of the partition's waiting records applies.
const (
	waitingRetryFirst = 100 * time.Millisecond
	waitingRetryMax   = 2 * time.Second
	// waitingRescan: a partition with nothing waiting still looks again,
	// for rows an earlier owner wrote after this worker loaded its keys.
	waitingRescan = time.Minute
)

// waitingSet is a worker's knowledge of its partition's records set aside:
// how many wait per key, and when to retry them. Only the worker touches it.
type waitingSet struct {
	loaded bool
	keys   map[string]int
	due    time.Time
	pause  time.Duration
}

func (s *waitingSet) empty() bool { return len(s.keys) == 0 }

// schedule sets the next retry: soon after records were set aside or some
// applied, later each time nothing moved.
func (s *waitingSet) schedule(moved bool) {
	switch {
	case s.empty():
		s.pause = 0
		s.due = time.Now().Add(waitingRescan)
		return
	case moved || s.pause == 0:
		s.pause = waitingRetryFirst
	default:
		s.pause = min(2*s.pause, waitingRetryMax)
	}
	s.due = time.Now().Add(s.pause)
}

// behind sets aside the entries whose key has records waiting.
func (s *waitingSet) behind(entries []entry) {
	if s.empty() {
		return
	}
	for i := range entries {
		e := &entries[i]
		if e.dead == nil && e.fault == nil && e.wait == nil && len(e.rec.Key) > 0 && s.keys[string(e.rec.Key)] > 0 {
			e.wait = waitAgain(e.waited)
			e.wait.reason = "behind a waiting record of its key"
		}
	}
}

// note counts the entries a committed batch set aside.
func (s *waitingSet) note(entries []entry) int {
	was, n := s.empty(), 0
	for _, e := range entries {
		if e.wait == nil {
			continue
		}
		if s.keys == nil {
			s.keys = map[string]int{}
		}
		s.keys[string(e.rec.Key)]++
		n++
	}
	if n > 0 && was {
		// The partition's first records set aside: retried soon. More
		// while it waits keep the retries' pace.
		s.schedule(true)
	}
	return n
}

// setAside writes the entries marked waiting, in tx: one statement per
// partition (a shared transaction holds several partitions' batches).
func setAside(ctx context.Context, tx pgx.Tx, group string, entries []entry) error {
	var parts []partitionKey
	rows := map[partitionKey]*waitingRows{}
	for _, e := range entries {
		if e.wait == nil {
			continue
		}
		k := partitionKey{e.rec.Topic, e.rec.Partition}
		w := rows[k]
		if w == nil {
			w = &waitingRows{}
			rows[k] = w
			parts = append(parts, k)
		}
		w.add(e)
	}
	for _, k := range parts {
		w := rows[k]
		if _, err := tx.Exec(ctx, waitingSetAsideSQL, group, k.topic, k.partition, w.offsets, w.keys, w.headers,
			w.payloads, w.times, w.reasons, w.attempts, w.since); err != nil {
			return fmt.Errorf("set records aside: %w", err)
		}
	}
	return nil
}

// waitingRows are one partition's records to set aside, as the statement's
// arrays.
type waitingRows struct {
	offsets          []int64
	keys, payloads   [][]byte
	headers, reasons []string
	times, since     []time.Time
	attempts         []int32
}

func (w *waitingRows) add(e entry) {
	r := e.rec.Record
	w.offsets, w.keys, w.payloads = append(w.offsets, r.Offset), append(w.keys, r.Key), append(w.payloads, r.Value)
	w.headers = append(w.headers, string(envelope.OutboxHeaders(envelope.HeaderMap(r.Headers))))
	w.times, w.reasons = append(w.times, r.Timestamp), append(w.reasons, e.wait.reason)
	w.attempts, w.since = append(w.attempts, int32(e.wait.attempts)), append(w.since, e.wait.since)
}

// loadWaiting reads which keys of the worker's partition have records set
// aside: before its first batch, since a batch must not apply a record
// whose key waits.
func (w *worker) loadWaiting(ctx context.Context) error {
	rows, err := w.g.applier.pool.Query(ctx, waitingKeysSQL, w.g.cfg.Group, w.topic, w.partition)
	if err != nil {
		return fmt.Errorf("load waiting keys: %w", err)
	}
	keys := map[string]int{}
	var key []byte
	var n int
	if _, err := pgx.ForEachRow(rows, []any{&key, &n}, func() error { keys[string(key)] = n; return nil }); err != nil {
		return fmt.Errorf("load waiting keys: %w", err)
	}
	w.waiting.loaded, w.waiting.keys = true, keys
	return nil
}

// takeWaiting reads the partition's oldest records set aside, as entries
// of a retry's batch.
func (w *worker) takeWaiting(ctx context.Context) ([]entry, error) {
	rows, err := w.g.applier.pool.Query(ctx, waitingTakeSQL, w.g.cfg.Group, w.topic, w.partition, w.g.cfg.MaxPoll)
	if err != nil {
		return nil, fmt.Errorf("take waiting records: %w", err)
	}
	var (
		recs    []*kgo.Record
		waits   []waiting
		headers map[string]string
	)
	var r kgo.Record
	var wt waiting
	_, err = pgx.ForEachRow(rows, []any{&r.Offset, &r.Key, &headers, &r.Value, &r.Timestamp, &wt.reason, &wt.attempts, &wt.since}, func() error {
		rec := r
		rec.Topic, rec.Partition, rec.Headers = w.topic, w.partition, envelope.RecordHeaders(headers)
		recs, waits = append(recs, &rec), append(waits, wt)
		headers = nil // JSON decodes into a map it is given: each row its own
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("take waiting records: %w", err)
	}
	entries := parseEntries(recs)
	for i := range entries {
		entries[i].waited = &waits[i]
	}
	return entries, nil
}

// retryWaiting applies what waits on the partition, oldest first, in
// transactions of their own under the partition's failure policy: what is
// still blocked stays, with every later record of its key. It returns false
// when told to quit meanwhile.
func (w *worker) retryWaiting(remote context.Context) bool {
	entries, err := w.takeWaiting(remote)
	if err == nil && len(entries) == 0 {
		err = w.loadWaiting(remote) // rows another owner left, or none
	}
	if err != nil || len(entries) == 0 {
		if err != nil && remote.Err() == nil {
			w.log.Warn("waiting records not read, trying again", slog.Any("error", err))
		}
		w.waiting.schedule(false)
		return remote.Err() == nil
	}
	done := 0
	for done < len(entries) {
		follow(entries[:done], entries[done:])
		n, ok := w.alone(remote, entries[done:], nil)
		if !ok {
			return false
		}
		done += n
	}
	applied := 0
	for _, e := range entries {
		if e.wait == nil {
			applied++
		}
	}
	w.g.metrics.waitingApplied.Add(float64(applied))
	if err := w.loadWaiting(remote); err != nil {
		// The keys stay as they were: a retry soon reads them again.
		w.log.Warn("waiting keys not read after a retry", slog.Any("error", err))
	}
	if w.waiting.empty() {
		w.log.Info("records set aside applied: nothing of the partition waits", slog.Int("records", applied))
	}
	w.waiting.schedule(applied > 0)
	return true
}
