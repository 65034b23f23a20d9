package cdc

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// leadership is one relay's claim on a slot: a session advisory lock held on
// a dedicated connection. If the process dies, Postgres ends the session and
// the lock passes to a standby. Postgres also refuses a second reader on an
// active slot; the lock makes the standby wait quietly instead of failing.
type leadership struct {
	conn *pgx.Conn
	key  string
}

// acquire blocks until this process holds the lock for slot, or ctx ends.
// onWait hears of every failed attempt: err is nil when another relay holds
// the lock, and says why otherwise (Postgres unreachable...).
func acquire(ctx context.Context, dsn, slot string, poll time.Duration, onWait func(err error)) (*leadership, error) {
	key := "sluice.cdc." + slot
	for {
		conn, err := pgx.Connect(ctx, dsn)
		if err == nil {
			var got bool
			err = conn.QueryRow(ctx, `SELECT pg_try_advisory_lock(hashtextextended($1, 0))`, key).Scan(&got)
			if err == nil && got {
				return &leadership{conn: conn, key: key}, nil
			}
			conn.Close(context.Background())
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if onWait != nil {
			onWait(err)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(poll):
		}
	}
}

// acquireQueued waits in Postgres's lock queue rather than polling: it is
// granted the moment the holder lets go, before any polling standby can take
// the lock. Resync uses it to step in between two attempts of a relay.
func acquireQueued(ctx context.Context, dsn, slot string) (*leadership, error) {
	key := "sluice.cdc." + slot
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return nil, fmt.Errorf("leader lock connection: %w", err)
	}
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock(hashtextextended($1, 0))`, key); err != nil {
		conn.Close(context.Background())
		return nil, fmt.Errorf("wait for the slot's lock: %w", err)
	}
	return &leadership{conn: conn, key: key}, nil
}

// hold returns when the lock is lost (its connection broke) or ctx ends.
func (l *leadership) hold(ctx context.Context, every time.Duration) error {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
			pingCtx, cancel := context.WithTimeout(ctx, every)
			err := l.conn.Ping(pingCtx)
			cancel()
			if err != nil && ctx.Err() == nil {
				return fmt.Errorf("leadership lost: %w", err)
			}
		}
	}
}

func (l *leadership) release() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, _ = l.conn.Exec(ctx, `SELECT pg_advisory_unlock(hashtextextended($1, 0))`, l.key)
	_ = l.conn.Close(ctx)
}
