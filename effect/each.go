package effect

import "context"

// Each is the Handler of a group whose records share no state: apply runs
// for each record of a batch, in order, in the batch's transaction, with
// the record's body decoded into T (a body that is not T's JSON is a
// permanent failure of its record). Its failure, a panic included, is its
// record's: see the kinds of failure beside Permanent.
//
// Written with the helpers (Once, Project, Tx.Emit, Tx.Add), apply is
// idempotent: applying a record twice changes nothing the first time did
// not.
func Each[T any](apply func(ctx context.Context, tx *Tx, e Event[T]) error) Handler {
	return each[T]{apply: apply}
}

type each[T any] struct {
	Local
	apply func(context.Context, *Tx, Event[T]) error
}

func (h each[T]) Begin(tx *Tx) Batch { return &eachBatch[T]{tx: tx, apply: h.apply} }

type eachBatch[T any] struct {
	tx    *Tx
	apply func(context.Context, *Tx, Event[T]) error
}

func (b *eachBatch[T]) Apply(ctx context.Context, recs []Record) error {
	for i := range recs {
		e := Event[T]{Record: recs[i]}
		if err := e.Decode(ctx, b.tx.Tx, &e.Payload); err != nil {
			return RecordFailed(i, err)
		}
		ectx, end := e.Trace(ctx, "")
		err := safely(func() error { return b.apply(ectx, b.tx, e) })
		end(err)
		if err != nil {
			return RecordFailed(i, err)
		}
	}
	return nil
}

func (b *eachBatch[T]) Settle(context.Context) error { return nil }

// safely turns a panic of one record's handling into a permanent failure
// of that record: a bug must dead-letter the record, not stop its
// partition forever.
func safely(fn func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = Permanentf("handler panic: %v", p)
		}
	}()
	return fn()
}
