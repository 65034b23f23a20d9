package credits

import (
	"context"
	_ "embed"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

//go:embed sql/probe.sql
var probeSQL string

// Locks is what a group's batches learned of balance rows locked elsewhere
// (an operator's UPDATE, a long transaction), shared by its batches. A
// batch whose settle waited out the lock timeout does not know which of its
// workspaces was locked, so it suspects them all; a later batch writing a
// suspected workspace first asks, without waiting, whether the row is still
// locked (FOR UPDATE SKIP LOCKED in a savepoint it rolls back), and a
// locked one makes its records wait (consumers.Blocked) instead of the
// whole batch: a workspace whose invoices keep coming costs one lock
// timeout, not one per batch. A row found free is forgotten.
type Locks struct {
	mu    sync.Mutex
	rows  map[string]time.Time // workspace -> since when suspected
	clock func() time.Time
}

// NewLocks is an empty memory.
func NewLocks() *Locks { return &Locks{rows: map[string]time.Time{}, clock: time.Now} }

// locksForget: a suspicion no batch checked for this long is dropped; a
// row still locked then costs one more lock timeout.
const locksForget = 10 * time.Minute

// suspect remembers workspaces one of which a statement waited for.
func (l *Locks) suspect(workspaces []string) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.clock()
	for _, w := range workspaces {
		if _, ok := l.rows[w]; !ok {
			l.rows[w] = now
		}
	}
}

// among are the suspected workspaces of workspaces.
func (l *Locks) among(workspaces []string) []string {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	now := l.clock()
	for _, w := range workspaces {
		since, ok := l.rows[w]
		switch {
		case !ok:
		case now.Sub(since) > locksForget:
			delete(l.rows, w)
		default:
			out = append(out, w)
		}
	}
	return out
}

// forget drops workspaces found free.
func (l *Locks) forget(workspaces []string) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, w := range workspaces {
		delete(l.rows, w)
	}
}

// probe says which of workspaces are locked by another transaction now,
// without waiting for any, and leaves tx holding none of them.
func probe(ctx context.Context, tx pgx.Tx, workspaces []string) (locked []string, err error) {
	if _, err := tx.Exec(ctx, "SAVEPOINT sluice_credits_probe"); err != nil {
		return nil, fmt.Errorf("probe balance locks: %w", err)
	}
	rows, err := tx.Query(ctx, probeSQL, workspaces)
	if err != nil {
		return nil, fmt.Errorf("probe balance locks: %w", err)
	}
	free := map[string]bool{}
	var w string
	if _, err := pgx.ForEachRow(rows, []any{&w}, func() error { free[w] = true; return nil }); err != nil {
		return nil, fmt.Errorf("probe balance locks: %w", err)
	}
	// The rows it locked are released: the settle takes them in workspace
	// order, like every other batch.
	if _, err := tx.Exec(ctx, "ROLLBACK TO SAVEPOINT sluice_credits_probe"); err != nil {
		return nil, fmt.Errorf("probe balance locks: %w", err)
	}
	for _, w := range workspaces {
		if !free[w] {
			locked = append(locked, w)
		}
	}
	return locked, nil
}
