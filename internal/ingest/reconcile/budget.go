package reconcile

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sluicehq/sluice/internal/refusal"
)

var (
	//go:embed sql/budget.sql
	budgetSQL string
	//go:embed sql/budget_refund.sql
	budgetRefundSQL string
)

// ErrBudget: the source's API request budget for this hour is spent.
var ErrBudget = refusal.Sub(refusal.Limited, "reconcile_budget", "reconcile: the source's API request budget for this hour is spent")

// budgeted draws every request to a source's API from its hourly budget,
// shared by every instance through one row in Postgres (one statement,
// committed on its own, before the request: no transaction spans a call).
// A request the provider answers 429 is given back: its own limit refused
// it, and the wait for it must not spend Sluice's. Each request sent is
// counted in requests.
type budgeted struct {
	next     http.RoundTripper
	pool     *pgxpool.Pool
	sourceID string
	limit    int
	requests *atomic.Int64
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
	b.requests.Add(1)
	resp, err := next.RoundTrip(req)
	if err == nil && resp.StatusCode == http.StatusTooManyRequests {
		if _, rerr := b.pool.Exec(context.WithoutCancel(req.Context()), budgetRefundSQL, b.sourceID); rerr != nil {
			resp.Body.Close()
			return nil, fmt.Errorf("reconcile budget: %w", rerr)
		}
	}
	return resp, err
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
