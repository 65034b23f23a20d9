package reconcile

import (
	"context"
	_ "embed"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

var (
	//go:embed sql/status.sql
	statusSQL string
	//go:embed sql/sources_status.sql
	sourcesStatusSQL string
)

// Run is one recorded reconciliation run of a source.
type Run struct {
	ID       int64      `json:"id"`
	SourceID string     `json:"source_id"`
	Kind     string     `json:"kind"`
	Since    *time.Time `json:"since"`
	Until    *time.Time `json:"until"`
	DryRun   bool       `json:"dry_run"`
	// Automatic: the schedule's window (or a run given no window).
	Automatic  bool       `json:"automatic"`
	Outcome    RunOutcome `json:"outcome"`
	StartedAt  time.Time  `json:"started_at"`
	FinishedAt *time.Time `json:"finished_at"`
	Found      int        `json:"found"`
	Corrected  int        `json:"corrected"`
	Pages      int        `json:"pages"`
	Requests   int        `json:"requests"`
	// Phase is where the run stood when it last saved: events, redeliver
	// or fetch; Reached how far back in the window its listing came.
	Phase   string     `json:"phase"`
	Reached *time.Time `json:"reached"`
	// Missing names the permission an optional lookup lacked (partial).
	Missing string `json:"missing_permission,omitempty"`
	Note    string `json:"note,omitempty"`
	Error   string `json:"error,omitempty"`
}

// Runs lists the latest runs, newest first: of one source, or of all when
// sourceID is empty.
func Runs(ctx context.Context, pool *pgxpool.Pool, sourceID string, limit int) ([]Run, error) {
	rows, err := pool.Query(ctx, statusSQL, optional(sourceID), limit)
	if err != nil {
		return nil, fmt.Errorf("reconcile status: %w", err)
	}
	runs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Run, error) {
		var r Run
		err := row.Scan(&r.ID, &r.SourceID, &r.Kind, &r.Since, &r.Until, &r.DryRun, &r.Automatic, &r.Outcome, &r.StartedAt,
			&r.FinishedAt, &r.Found, &r.Corrected, &r.Pages, &r.Requests, &r.Phase, &r.Reached, &r.Missing, &r.Note, &r.Error)
		return r, err
	})
	if err != nil {
		return nil, fmt.Errorf("reconcile status: %w", err)
	}
	return runs, nil
}

// SourceStatus is where one reconciled source stands.
type SourceStatus struct {
	SourceID string `json:"source_id"`
	Kind     string `json:"kind"`
	// CoveredUntil: everything before it has been read to its end by the
	// schedule (nil: nothing yet).
	CoveredUntil *time.Time `json:"covered_until"`
	// Since and Until are the automatic window in progress (nil: none);
	// Phase and Reached where in it the last run stopped: the listing has
	// come back to Reached, and [Since, Reached) is what is left of it.
	Since   *time.Time `json:"since"`
	Until   *time.Time `json:"until"`
	Phase   string     `json:"phase,omitempty"`
	Reached *time.Time `json:"reached"`
	// Waiting counts events held for their object (a Stripe refund before
	// the invoice payment that links it): what a refused lookup leaves.
	Waiting int `json:"waiting"`
	// Missing is the permission the last finished run lacked, if any.
	Missing string `json:"missing_permission,omitempty"`
	// Used of Budget requests were sent this clock hour; NextRequest is
	// when the next one is allowed (now, or the next hour once spent).
	Used        int       `json:"budget_used"`
	Budget      *int      `json:"budget"`
	NextRequest time.Time `json:"next_request_at"`
}

// Sources says where each source with API credentials stands: of one
// source, or of all when sourceID is empty.
func Sources(ctx context.Context, pool *pgxpool.Pool, sourceID string) ([]SourceStatus, error) {
	rows, err := pool.Query(ctx, sourcesStatusSQL, optional(sourceID))
	if err != nil {
		return nil, fmt.Errorf("reconcile status: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (SourceStatus, error) {
		var s SourceStatus
		err := row.Scan(&s.SourceID, &s.Kind, &s.CoveredUntil, &s.Since, &s.Until, &s.Phase, &s.Reached, &s.Waiting, &s.Missing,
			&s.Used, &s.Budget, &s.NextRequest)
		return s, err
	})
	if err != nil {
		return nil, fmt.Errorf("reconcile status: %w", err)
	}
	return out, nil
}

func optional(id string) *string {
	if id == "" {
		return nil
	}
	return &id
}
