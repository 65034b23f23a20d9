package consumers

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
)

// applier is the one transaction protocol of the runtime, for a worker's
// batch and a replayed dead letter alike: prepare (remote calls, outside any
// transaction) -> begin -> the runtime's own writes -> apply -> settle ->
// commit. Nothing it does counts as done before the commit returned.
type applier struct {
	pool    *pgxpool.Pool
	handler Handler
	group   string              // whose records are set aside (waiting.go); "" for a replayed dead letter
	slots   Slots               // bounds open transactions; nil: unbounded
	waited  prometheus.Observer // time spent waiting for a slot; nil: not observed
	// lockTimeout is the statement that bounds the transaction's lock
	// waits (Config.LockTimeout); "": none, as for a replayed dead letter,
	// which an operator runs once and may wait.
	lockTimeout string
}

// setLockTimeout is the statement that sets d as the transaction's
// lock_timeout; "" for none.
func setLockTimeout(d time.Duration) string {
	if d <= 0 {
		return ""
	}
	return fmt.Sprintf("SET LOCAL lock_timeout = '%dms'", max(1, d.Milliseconds()))
}

// run applies the live entries in one transaction: with one call to Apply,
// or one call per record when oneByOne. first writes the runtime's rows
// (dead letters, a replay's mark) in the same transaction. A failure that is
// an entry's fault names it (failedRecords), by its index in entries.
func (a applier) run(ctx, remote context.Context, entries []entry, oneByOne bool, first func(context.Context, pgx.Tx) error) error {
	if err := a.prepare(remote, entries); err != nil {
		return err
	}
	return a.transact(ctx, entries, oneByOne, first)
}

// transact is run for entries already prepared: the transaction alone.
func (a applier) transact(ctx context.Context, entries []entry, oneByOne bool, first func(context.Context, pgx.Tx) error) error {
	if a.slots != nil {
		queued := time.Now()
		a.slots <- struct{}{}
		defer func() { <-a.slots }()
		if a.waited != nil {
			a.waited.Observe(time.Since(queued).Seconds())
		}
	}
	tx, err := a.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer tx.Rollback(context.Background()) //nolint:errcheck // no-op after commit
	if a.lockTimeout != "" {
		if _, err := tx.Exec(ctx, a.lockTimeout); err != nil {
			return fmt.Errorf("lock timeout: %w", err)
		}
	}
	if err := first(ctx, tx); err != nil {
		return err
	}
	if err := setAside(ctx, tx, a.group, entries); err != nil {
		return err
	}
	var b Batch
	if err := safely(func() error { b = a.handler.Begin(tx); return nil }); err != nil {
		return err
	}
	if err := a.apply(ctx, b, entries, oneByOne); err != nil {
		return err
	}
	if err := safely(func() error { return b.Settle(ctx) }); err != nil {
		return fmt.Errorf("settle batch: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// prepare runs the handler's remote step for every live record not yet
// prepared. What it learned stays with the entries across attempts.
func (a applier) prepare(ctx context.Context, entries []entry) error {
	for i := range entries {
		e := &entries[i]
		if e.dead != nil || e.fault != nil || e.wait != nil || e.rec.Prepared != nil {
			continue
		}
		if err := safely(func() error { return a.handler.Prepare(e.rec.traced(ctx), &e.rec) }); err != nil {
			return RecordFailed(i, err)
		}
	}
	return nil
}

// apply hands the live records to b: in one call, or one call per record
// when oneByOne.
func (a applier) apply(ctx context.Context, b Batch, entries []entry, oneByOne bool) error {
	live, at, err := liveRecords(entries)
	if err != nil || len(live) == 0 {
		return err
	}
	if oneByOne {
		for j := range live {
			if err := safely(func() error { return b.Apply(ctx, live[j:j+1]) }); err != nil {
				return RecordFailed(at[j], err)
			}
		}
		return nil
	}
	err = safely(func() error { return b.Apply(ctx, live) })
	if err == nil {
		return nil
	}
	if mapped, named := renumber(err, at); named {
		return mapped
	}
	switch {
	case len(live) == 1:
		return RecordFailed(at[0], err)
	case IsPermanent(err):
		return setBasedFailure(err)
	}
	return err
}
