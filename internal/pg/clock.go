package pg

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// ClockSkew is how far this machine's clock is from Postgres's, measured
// against the middle of one round trip (so the network's delay does not
// count as skew).
func ClockSkew(ctx context.Context, pool *pgxpool.Pool) (time.Duration, error) {
	before := time.Now()
	var theirs time.Time
	if err := pool.QueryRow(ctx, `SELECT clock_timestamp()`).Scan(&theirs); err != nil {
		return 0, fmt.Errorf("read postgres's clock: %w", err)
	}
	after := time.Now()
	mid := before.Add(after.Sub(before) / 2)
	return mid.Sub(theirs), nil
}
