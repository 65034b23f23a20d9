package delivery

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Advisory lock spaces (the first key of a two-key lock): an endpoint's
// owner holds (lockSpace, endpoint); every deliverer holds (presenceSpace,
// its deployment's name) shared, so each can count the others of its
// deployment (several may share a database). A deliverer that reads
// deliveries from the endpoints' marks holds (markSpace, name) too: one
// holding only the first is of a release before, which needs queue rows.
const (
	lockSpace     = "sluice.deliver"
	presenceSpace = "sluice.deliverers"
	markSpace     = "sluice.deliverers.marks"
)

// owner holds, on a connection of its own, the session advisory locks of
// the endpoints this process delivers to. One owner per endpoint keeps its
// queue in one memory and its rate and concurrency whole across a
// deployment; a process that dies drops its connection, and with it its
// locks, so another takes its endpoints at its next refresh.
type owner struct {
	conn *pgx.Conn
	name string
	pid  uint32 // the session's, which holds the locks
}

func newOwner(ctx context.Context, pool *pgxpool.Pool, name string) (*owner, error) {
	c, err := pool.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("connect the endpoints' owner: %w", err)
	}
	conn := c.Hijack()
	// markSpace first: no other deliverer ever counts this one as old.
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock_shared(hashtext($1), hashtext($3)), pg_advisory_lock_shared(hashtext($2), hashtext($3))`,
		markSpace, presenceSpace, name); err != nil {
		_ = conn.Close(ctx)
		return nil, fmt.Errorf("announce the deliverer: %w", err)
	}
	return &owner{conn: conn, name: name, pid: conn.PgConn().PID()}, nil
}

// deliverers counts the processes of this deployment delivering now, this
// one included, and of them those of a release before (without markSpace).
// pg_locks shows every database's locks: only this one's count.
func (o *owner) deliverers(ctx context.Context) (n, old int, err error) {
	n, old, err = countDeliverers(ctx, o.conn, o.name, nil)
	return max(n, 1), old, err
}

// countDeliverers is deliverers' count, asked on any connection, leaving
// out the sessions whose pids are given.
func countDeliverers(ctx context.Context, q interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}, name string, leaveOut []int32) (n, old int, err error) {
	err = q.QueryRow(ctx, `WITH l AS (
  SELECT pid, classid::bigint AS space FROM pg_locks
  WHERE locktype = 'advisory' AND granted AND objsubid = 2 AND NOT (pid = ANY(coalesce($4::int[], '{}')))
    AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
    AND objid::bigint = hashtext($3)::bigint & 4294967295
    AND classid::bigint IN (hashtext($1)::bigint & 4294967295, hashtext($2)::bigint & 4294967295)
)
SELECT count(*) FILTER (WHERE space = hashtext($1)::bigint & 4294967295),
       count(*) FILTER (WHERE space = hashtext($1)::bigint & 4294967295
                          AND pid NOT IN (SELECT pid FROM l WHERE space = hashtext($2)::bigint & 4294967295))
FROM l`, presenceSpace, markSpace, name, leaveOut).Scan(&n, &old)
	if err != nil {
		return 0, 0, fmt.Errorf("count deliverers: %w", err)
	}
	return n, old, nil
}

// take locks up to n of ids that no other process owns, and returns them.
func (o *owner) take(ctx context.Context, ids []string, n int) ([]string, error) {
	if n <= 0 || len(ids) == 0 {
		return nil, nil
	}
	// The filter runs row by row under the limit: no lock is taken past n.
	rows, err := o.conn.Query(ctx, `SELECT e FROM unnest($1::text[]) AS e
WHERE pg_try_advisory_lock(hashtext($2), hashtext(e)) LIMIT $3`, ids, lockSpace, n)
	if err != nil {
		return nil, fmt.Errorf("take endpoints: %w", err)
	}
	got, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("take endpoints: %w", err)
	}
	return got, nil
}

// release unlocks endpoint id, whose loop has stopped.
func (o *owner) release(ctx context.Context, id string) error {
	if _, err := o.conn.Exec(ctx, `SELECT pg_advisory_unlock(hashtext($1), hashtext($2))`, lockSpace, id); err != nil {
		return fmt.Errorf("release endpoint: %w", err)
	}
	return nil
}

func (o *owner) close() { _ = o.conn.Close(context.Background()) }
