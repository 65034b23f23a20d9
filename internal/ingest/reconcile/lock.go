package reconcile

import (
	"context"
	"fmt"
)

// lockSpace is the first key of reconciliation's advisory locks, so they
// never meet another component's.
const lockSpace = "sluice.reconcile"

// lock takes the source's reconciliation lock, a session advisory lock on
// a connection held for the run (no transaction stays open meanwhile), or
// returns ErrBusy. unlock releases it.
func (r *Runner) lock(ctx context.Context, sourceID string) (unlock func(), err error) {
	conn, err := r.pool.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("reconcile lock: %w", err)
	}
	var got bool
	if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock(hashtext($1), hashtext($2))`, lockSpace, sourceID).Scan(&got); err != nil {
		conn.Release()
		return nil, fmt.Errorf("reconcile lock: %w", err)
	}
	if !got {
		conn.Release()
		return nil, ErrBusy
	}
	return func() {
		if _, err := conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock(hashtext($1), hashtext($2))`, lockSpace, sourceID); err != nil {
			// A connection that may still hold the lock is closed, which
			// releases it.
			_ = conn.Conn().Close(context.WithoutCancel(ctx))
		}
		conn.Release()
	}, nil
}
