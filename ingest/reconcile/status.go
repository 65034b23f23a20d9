package reconcile

import (
	"context"
	_ "embed"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

//go:embed sql/status.sql
var statusSQL string

// Run is one recorded reconciliation run of a source.
type Run struct {
	ID         int64      `json:"id"`
	SourceID   string     `json:"source_id"`
	Kind       string     `json:"kind"`
	Since      time.Time  `json:"since"`
	Until      time.Time  `json:"until"`
	DryRun     bool       `json:"dry_run"`
	StartedAt  time.Time  `json:"started_at"`
	FinishedAt *time.Time `json:"finished_at"`
	Found      int        `json:"found"`
	Corrected  int        `json:"corrected"`
	Error      string     `json:"error,omitempty"`
}

// Runs lists the latest runs, newest first: of one source, or of all when
// sourceID is empty.
func Runs(ctx context.Context, pool *pgxpool.Pool, sourceID string, limit int) ([]Run, error) {
	var src *string
	if sourceID != "" {
		src = &sourceID
	}
	rows, err := pool.Query(ctx, statusSQL, src, limit)
	if err != nil {
		return nil, fmt.Errorf("reconcile status: %w", err)
	}
	runs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Run, error) {
		var r Run
		err := row.Scan(&r.ID, &r.SourceID, &r.Kind, &r.Since, &r.Until, &r.DryRun, &r.StartedAt, &r.FinishedAt, &r.Found, &r.Corrected, &r.Error)
		return r, err
	})
	if err != nil {
		return nil, fmt.Errorf("reconcile status: %w", err)
	}
	return runs, nil
}
