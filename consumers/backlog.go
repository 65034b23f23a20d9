package consumers

import (
	_ "embed"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluicehq/sluice/internal/pg"
)

//go:embed sql/dead_letter_backlog.sql
var deadLetterBacklogSQL string

// NewBacklogCollector exports the dead letters waiting for an operator, per
// group, read at scrape time: the counter of dead letters says how many
// failed, this says how many still need someone.
func NewBacklogCollector(pool *pgxpool.Pool, timeout time.Duration, log *slog.Logger) prometheus.Collector {
	return pg.NewQueryCollector(pool, timeout, log, deadLetterBacklogSQL, 1,
		prometheus.NewDesc("sluice_dead_letters_pending", "Dead letters not replayed yet.", []string{"group"}, nil),
		prometheus.NewDesc("sluice_dead_letters_oldest_pending_seconds", "Age of the oldest dead letter not replayed yet.", []string{"group"}, nil))
}
