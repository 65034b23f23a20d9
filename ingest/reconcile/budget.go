package reconcile

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"net/http"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

//go:embed sql/budget.sql
var budgetSQL string

// ErrBudget: the source's API request budget for this hour is spent.
var ErrBudget = errors.New("reconcile: the source's API request budget for this hour is spent")

// budgeted draws every request to a source's API from its hourly budget,
// shared by every instance through one row in Postgres (one statement,
// committed on its own, before the request: no transaction spans a call).
type budgeted struct {
	next     http.RoundTripper
	pool     *pgxpool.Pool
	sourceID string
	limit    int
}

func (b *budgeted) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := b.take(req.Context()); err != nil {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, err
	}
	next := b.next
	if next == nil {
		next = http.DefaultTransport
	}
	return next.RoundTrip(req)
}

func (b *budgeted) take(ctx context.Context) error {
	var used int
	err := b.pool.QueryRow(ctx, budgetSQL, b.sourceID, b.limit).Scan(&used)
	if errors.Is(err, pgx.ErrNoRows) {
		return ErrBudget
	}
	if err != nil {
		return fmt.Errorf("reconcile budget: %w", err)
	}
	return nil
}
