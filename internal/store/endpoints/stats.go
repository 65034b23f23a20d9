package endpoints

import (
	"context"
	_ "embed"
	"fmt"
	"time"
)

// StatsWindow bounds the rows an endpoint's figures read: its newest
// StatsWindow deliveries and at most StatsWindow pending ones, so the
// figures of an endpoint with millions of rows cost what those of a small
// one do.
const StatsWindow = 10_000

//go:embed sql/stats.sql
var statsSQL string

// Stats are an endpoint's figures, read from its deliveries.
type Stats struct {
	// Window is how many of the newest deliveries Delivered and Dead were
	// counted in (at most StatsWindow).
	Window    int `json:"window" doc:"How many of the endpoint's newest deliveries delivered and dead were counted in (at most 10,000)."`
	Delivered int `json:"delivered" doc:"Delivered (a 2xx), of the newest window deliveries."`
	Dead      int `json:"dead" doc:"Given up after the retry horizon, of the newest window deliveries."`
	// Pending counts up to StatsWindow; PendingAtLeast says there are
	// more.
	Pending        int  `json:"pending" doc:"Deliveries waiting to be sent or retried (counted up to 10,000)."`
	PendingAtLeast bool `json:"pending_at_least" doc:"true: there are more than pending; pending and oldest_pending_age_seconds are lower bounds."`
	// OldestPendingAgeSeconds is the age of the oldest pending delivery
	// read (a lower bound when PendingAtLeast).
	OldestPendingAgeSeconds float64    `json:"oldest_pending_age_seconds" doc:"Age of the oldest undelivered delivery; 0 when none waits."`
	LastAttemptAt           *time.Time `json:"last_attempt_at,omitempty" doc:"The latest request to the endpoint, successful or not (of the deliveries read)."`
	LastError               string     `json:"last_error,omitempty" doc:"The latest failed attempt's error (class: detail)."`
	LastErrorAt             *time.Time `json:"last_error_at,omitempty"`
	LastErrorStatus         int        `json:"last_error_status,omitempty" doc:"The HTTP status of the latest failed attempt; absent when no answer came."`
}

// Stats reads an endpoint's figures (see StatsWindow for their bounds).
func (s Store) Stats(ctx context.Context, id string) (Stats, error) {
	if _, err := s.TenantOf(ctx, id); err != nil {
		return Stats{}, err
	}
	var (
		st                Stats
		age               *float64
		lastDelivered     *time.Time
		status            *int
		errClass, errText *string
	)
	if err := s.Pool.QueryRow(ctx, statsSQL, id, StatsWindow).Scan(&st.Window, &st.Delivered, &st.Dead, &st.Pending, &age,
		&lastDelivered, &st.LastErrorAt, &status, &errClass, &errText); err != nil {
		return Stats{}, fmt.Errorf("read endpoint figures: %w", err)
	}
	if st.Pending > StatsWindow {
		st.Pending, st.PendingAtLeast = StatsWindow, true
	}
	if age != nil {
		st.OldestPendingAgeSeconds = max(*age, 0)
	}
	if errClass != nil {
		st.LastError = *errClass
		if errText != nil && *errText != "" {
			st.LastError += ": " + *errText
		}
	}
	if status != nil {
		st.LastErrorStatus = *status
	}
	st.LastAttemptAt = latest(lastDelivered, st.LastErrorAt)
	return st, nil
}

func latest(a, b *time.Time) *time.Time {
	switch {
	case a == nil:
		return b
	case b == nil || a.After(*b):
		return a
	}
	return b
}
