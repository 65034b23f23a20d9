package consumers

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
)

// Handler is a consumer group's business logic. The runtime calls it in one
// order, for a worker's batch and for a replayed dead letter alike:
//
//	Prepare (each live record, outside any transaction)
//	-> BEGIN -> Begin(tx) -> Apply(records) ... -> Settle -> COMMIT
//
// Every effect must be idempotent: the same record may be applied again
// after a crash, a retry or a rewind, and must then change nothing.
type Handler interface {
	// Prepare does what needs a remote service (an HTTP call) before the
	// transaction opens, never inside it, and leaves what it learned in
	// rec.Prepared for Apply, which re-checks local state. It is skipped for
	// a record already prepared, and may run again for the same record (a
	// rewind, a replay), so what it calls must tolerate repetition (an
	// idempotency key). Its errors are classified like Apply's. Handlers
	// with nothing remote embed Local.
	Prepare(ctx context.Context, rec *Record) error
	// Begin starts the state of one transaction attempt over tx: caches,
	// net balance changes, intents not written yet. A retried batch begins
	// again from nothing, like its transaction.
	Begin(tx pgx.Tx) Batch
}

// Batch is one transaction attempt of a Handler: its state passes as the
// value's fields, never through the context.
type Batch interface {
	// Apply applies recs (parsed, none dead-lettered) in order and must
	// leave the same effects as applying them one at a time. recs may come
	// from several partitions of the group (their batches sharing a
	// transaction), each partition's in its order. A failure that
	// is a record's fault names it (RecordFailed); one that names none and
	// is permanent (a set-based statement refused some record's data)
	// makes the runtime roll back and apply the batch again one record per
	// call, to find the record to retry and, after its attempts,
	// dead-letter. A transient failure retries the whole batch.
	Apply(ctx context.Context, recs []Record) error
	// Settle finishes the transaction's work after the last Apply and
	// before COMMIT (credits move balances by the batch's net amounts, in
	// workspace order, so concurrent batches take row locks in one order
	// and hold them only until the commit). Its failure fails the whole
	// transaction, retried as transient.
	Settle(ctx context.Context) error
}

// Local is embedded by a Handler that needs nothing outside Postgres.
type Local struct{}

// Prepare implements Handler: there is nothing to prepare.
func (Local) Prepare(context.Context, *Record) error { return nil }

// RecordFunc is a Handler whose records need nothing remote and share no
// state: it applies each record in order, in the batch's transaction.
type RecordFunc func(ctx context.Context, tx pgx.Tx, rec Record) error

// Prepare implements Handler: there is nothing to prepare.
func (RecordFunc) Prepare(context.Context, *Record) error { return nil }

// Begin implements Handler.
func (f RecordFunc) Begin(tx pgx.Tx) Batch { return EachRecord(tx, f) }

// EachRecord is the Batch of a handler whose records share no state: apply
// runs for each record, in order, and a failure (a panic included) names
// its record.
func EachRecord(tx pgx.Tx, apply func(ctx context.Context, tx pgx.Tx, rec Record) error) Batch {
	return eachRecord{tx: tx, apply: apply}
}

type eachRecord struct {
	tx    pgx.Tx
	apply func(context.Context, pgx.Tx, Record) error
}

func (b eachRecord) Apply(ctx context.Context, recs []Record) error {
	for i, rec := range recs {
		ctx, span := rec.StartEffect(ctx, "", time.Time{})
		// Recovered here, a panic still names its record.
		err := safely(func() error { return b.apply(ctx, b.tx, rec) })
		EndSpan(span, err)
		if err != nil {
			return RecordFailed(i, err)
		}
	}
	return nil
}

func (eachRecord) Settle(context.Context) error { return nil }

// recordError is a failure that names the record at fault, by its index
// among the records handed over; more are other records of the same call
// failing for good, each with its own error (RecordsFailed).
type recordError struct {
	index int
	err   error
	more  []recordError
}

func (e recordError) Error() string { return e.err.Error() }
func (e recordError) Unwrap() error { return e.err }

// RecordFailed says err is the fault of recs[i] in the call to Apply that
// received recs. It keeps err's classification (Permanent, RetryAfter).
func RecordFailed(i int, err error) error {
	if err == nil {
		return nil
	}
	return recordError{index: i, err: err}
}

// RecordsFailed says several records of the call to Apply failed for good,
// errs[i] the fault of recs[i]: a set-based handler that finds many bad
// records with one statement names them all, so the runtime dead-letters
// them with one more attempt instead of one per record. Classified by the
// first one's error, by index.
func RecordsFailed(errs map[int]error) error {
	var all []recordError
	for i, err := range errs {
		if err != nil {
			all = append(all, recordError{index: i, err: err})
		}
	}
	if len(all) == 0 {
		return nil
	}
	slices.SortFunc(all, func(a, b recordError) int { return a.index - b.index })
	first := all[0]
	first.more = all[1:]
	return first
}

// failedRecords are the records RecordFailed or RecordsFailed named in err,
// in index order.
func failedRecords(err error) ([]recordError, bool) {
	var r recordError
	if !errors.As(err, &r) {
		return nil, false
	}
	first := r
	first.more = nil
	return append([]recordError{first}, r.more...), true
}

// Renumber maps the records err names (RecordFailed, RecordsFailed) from
// the indices of the records a handler received to at[i], their indices
// in the call that handed them over; an error naming none, or naming an
// index at lacks, is returned as it is.
func Renumber(err error, at []int) error {
	mapped, _ := renumber(err, at)
	return mapped
}

// renumber maps the indices of the records err names through at (the
// index in the batch of each record handed to Apply), keeping each error.
func renumber(err error, at []int) (error, bool) {
	failed, ok := failedRecords(err)
	if !ok {
		return err, false
	}
	errs := make(map[int]error, len(failed))
	for _, f := range failed {
		if f.index < 0 || f.index >= len(at) {
			return err, false
		}
		errs[at[f.index]] = f.err
	}
	return RecordsFailed(errs), true
}

// safely turns a handler panic into a permanent error (the recoverer): a
// bug in one record's handling must dead-letter that record, not crash the
// partition forever.
func safely(fn func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = Permanentf("handler panic: %v", p)
		}
	}()
	return fn()
}

// errSetBased marks a permanent failure of a multi-record Apply that named
// no record.
var errSetBased = errors.New("set-based batch")

func setBasedFailure(err error) error { return fmt.Errorf("%w: %w", errSetBased, err) }
