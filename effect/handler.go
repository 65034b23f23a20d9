package effect

import "context"

// Handler is a set-based handler: the runtime calls it in one order, for
// a worker's batch and for a replayed dead letter alike:
//
//	Prepare (each record, outside any transaction)
//	-> BEGIN -> Begin(tx) -> Apply(records) ... -> Settle -> COMMIT
//
// Every effect must be idempotent: the same record may be applied again
// after a crash, a retry or a rewind, and must then change nothing.
type Handler interface {
	// Prepare does what needs a remote service (an HTTP call) before the
	// transaction opens, never inside it, and leaves what it learned in
	// rec.Prepared for Apply, which re-checks local state. It is skipped
	// for a record already prepared and may run again for the same record
	// (a rewind, a replay), so what it calls must tolerate repetition (an
	// idempotency key). Handlers with nothing remote embed Local.
	Prepare(ctx context.Context, rec *Record) error
	// Begin starts the state of one transaction attempt over tx: caches,
	// net changes, what to write at the end. A retried batch begins again
	// from nothing, like its transaction.
	Begin(tx *Tx) Batch
}

// Batch is one transaction attempt of a Handler; its state lives in the
// value, never in the context.
type Batch interface {
	// Apply applies recs in order and must leave the same effects as
	// applying them one at a time. recs may come from several partitions
	// of the group (their batches sharing a transaction), each
	// partition's in its order. A failure that is a record's fault names
	// it (RecordFailed); a permanent one naming none makes the runtime
	// apply the batch again one record per call to find it.
	Apply(ctx context.Context, recs []Record) error
	// Settle finishes the transaction's work after the last Apply and
	// before COMMIT; then the intents emitted and the counters' changes
	// are written. Its failure fails the transaction, retried as
	// transient.
	Settle(ctx context.Context) error
}

// Local is embedded by a Handler that needs nothing outside Postgres.
type Local struct{}

// Prepare implements Handler: there is nothing to prepare.
func (Local) Prepare(context.Context, *Record) error { return nil }
