package pg_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sluicehq/sluice/internal/pg"
	"github.com/sluicehq/sluice/internal/testenv"
)

// Every pool carries its settings on every connection it opens, set by a
// statement once connected (a pooler may refuse them as startup
// parameters): none compiles or starts parallel workers, and the pools that
// differ from Connect add their plan mode and commit mode.
func TestEachPoolHasItsSettingsOnEveryConnection(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := testenv.Require(t).DatabaseURL
	for _, tc := range []struct {
		name               string
		connect            func(context.Context, string, int32) (*pgxpool.Pool, error)
		planMode, syncMode string
	}{
		{"plain", pg.Connect, "auto", "on"},
		{"committer", pg.ConnectCommitter, "force_generic_plan", "on"},
		{"deliverer", pg.ConnectDeliverer, "force_generic_plan", "off"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			pool, err := tc.connect(ctx, url, 2)
			if err != nil {
				t.Fatal(err)
			}
			defer pool.Close()
			// Two connections at once: each opened with the settings.
			a, err := pool.Acquire(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer a.Release()
			b, err := pool.Acquire(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer b.Release()
			for _, c := range []*pgxpool.Conn{a, b} {
				var plan, sync, jit, workers string
				if err := c.QueryRow(ctx, `SELECT current_setting('plan_cache_mode'), current_setting('synchronous_commit'),
					current_setting('jit'), current_setting('max_parallel_workers_per_gather')`).Scan(&plan, &sync, &jit, &workers); err != nil {
					t.Fatal(err)
				}
				if plan != tc.planMode || sync != tc.syncMode || jit != "off" || workers != "0" {
					t.Fatalf("plan_cache_mode %s, synchronous_commit %s, jit %s, max_parallel_workers_per_gather %s; want %s, %s, off, 0",
						plan, sync, jit, workers, tc.planMode, tc.syncMode)
				}
			}
		})
	}
}
