package consumers

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// Settler is a Handler with work to finish once per batch transaction, after
// every record was applied and before the commit. Credits use it to move
// balances by the batch's net amounts in workspace order: batches of
// different partitions then take their row locks in one order and wait for
// each other instead of deadlocking, and hold them only until the commit.
// A Settle error fails the whole transaction, which is retried as transient.
type Settler interface {
	Handler
	Settle(ctx context.Context, tx pgx.Tx) error
}

// BatchHandler is a Handler that can also apply a whole batch at once, with
// a few set-based statements instead of round trips per record. ApplyBatch
// must leave the same effects as Apply called on each record in order, and
// stay idempotent the same way (business keys, versions). recs are the
// batch's live records: parsed, none dead-lettered.
//
// When ApplyBatch fails with a permanent error (the data of some record is
// at fault, and it need not say which), the runtime rolls back and applies
// the same batch one record at a time through Apply, which finds the record
// to retry and, after its attempts, dead-letter. A transient error retries
// the whole batch, set-based again.
type BatchHandler interface {
	Handler
	ApplyBatch(ctx context.Context, tx pgx.Tx, recs []Record) error
}

type batchKey struct{}

// batch holds per-transaction values (see BatchValue).
type batch struct{ values map[any]any }

func withBatch(ctx context.Context) context.Context {
	return context.WithValue(ctx, batchKey{}, &batch{values: map[any]any{}})
}

// BatchValue returns the value kept under key for the current batch
// transaction, made by init on first use. It lives exactly as long as one
// transaction attempt: a retried batch starts again from init, like its
// transaction. Outside a batch it returns a fresh init().
func BatchValue[T any](ctx context.Context, key any, init func() T) T {
	b, ok := ctx.Value(batchKey{}).(*batch)
	if !ok {
		return init()
	}
	if v, ok := b.values[key].(T); ok {
		return v
	}
	v := init()
	b.values[key] = v
	return v
}

// settle runs h's Settle, when it has one.
func settle(ctx context.Context, tx pgx.Tx, h Handler) error {
	if s, ok := h.(Settler); ok {
		return safely(func() error { return s.Settle(ctx, tx) })
	}
	return nil
}
