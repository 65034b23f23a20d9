package operate

import (
	"context"
	_ "embed"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sluicehq/sluice/internal/store/inbox"
)

var (
	//go:embed sql/overview_counts.sql
	overviewCountsSQL string
	//go:embed sql/overview_minutes.sql
	overviewMinutesSQL string
)

// OverviewWindow is how far back an overview looks: the console's charts
// cover the last hour.
const OverviewWindow = time.Hour

// Overview is what a deployment, or one tenant of it, looks like now: the
// events accepted per minute over the last hour by inbox status, and the
// counts an operator acts on.
type Overview struct {
	Since              time.Time      `json:"since" doc:"Start of the window: the counts that are per window count from here."`
	Until              time.Time      `json:"until"`
	Minutes            []MinuteCounts `json:"minutes" nullable:"false" doc:"Events accepted per minute of the window, oldest first; a minute with none is absent."`
	Accepted           int64          `json:"accepted" doc:"Events accepted in the window, every status."`
	DeadLettersPending int64          `json:"dead_letters_pending" doc:"Dead letters not replayed, of any age."`
	Conflicts          int64          `json:"conflicts" doc:"Conflicting deliveries received in the window."`
	Corrections        int64          `json:"corrections" doc:"Reconciliation corrections made in the window."`
	EndpointsFailing   int64          `json:"endpoints_failing" doc:"Endpoints whose attempts fail now, or disabled as failing or gone."`
}

// MinuteCounts is one minute's accepted events by inbox status.
type MinuteCounts struct {
	Minute   time.Time              `json:"minute"`
	ByStatus map[inbox.Status]int64 `json:"by_status"`
}

// Overview reads the figures of the scope's tenant (nil: every tenant) for
// the OverviewWindow before now.
func (o *Operator) Overview(ctx context.Context, scope *Scope, now time.Time) (Overview, error) {
	ov := Overview{Since: now.Add(-OverviewWindow).Truncate(time.Minute), Until: now, Minutes: []MinuteCounts{}}
	var counts map[minuteKey]int64
	err := pgx.BeginTxFunc(ctx, o.pool, pgx.TxOptions{AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		// Every count reads a few rows, but the conflicts' many daily
		// partitions, estimated before any was analyzed, drew a parallel
		// plan whose workers took 20 ms to start (more under load) for a
		// 0.5 ms read: no workers and no JIT for the overview's reads.
		if _, err := tx.Exec(ctx, "SET LOCAL max_parallel_workers_per_gather = 0; SET LOCAL jit = off"); err != nil {
			return err
		}
		err := tx.QueryRow(ctx, overviewCountsSQL, scope.tenant(), ov.Since).
			Scan(&ov.DeadLettersPending, &ov.Conflicts, &ov.Corrections, &ov.EndpointsFailing)
		if err != nil {
			return fmt.Errorf("overview counts: %w", err)
		}
		if counts, err = o.minutes.read(ctx, tx, ov.Since, now); err != nil {
			return fmt.Errorf("overview minutes: %w", err)
		}
		return nil
	})
	if err != nil {
		return Overview{}, err
	}
	ov.Minutes, ov.Accepted = minuteCounts(counts, scope.tenant())
	return ov, nil
}

// CountDeadLetters counts the pending dead letters a filter selects: what
// ReplayDeadLetters would replay now (a dry run of it).
func (o *Operator) CountDeadLetters(ctx context.Context, scope *Scope, f DeadLetterFilter) (int64, error) {
	f.Replayed, f.After, f.Limit = false, "", 0
	w, err := deadLetterWhere(scope, f)
	if err != nil {
		return 0, err
	}
	var n int64
	if err := o.pool.QueryRow(ctx, "SELECT count(*) FROM ("+deadLettersSQL+w.String()+") AS selected", w.args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("count dead letters: %w", err)
	}
	return n, nil
}
