package consumers

import (
	_ "embed"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluicehq/sluice/internal/pg"
)

var (
	//go:embed sql/dead_letter_backlog.sql
	deadLetterBacklogSQL string
	//go:embed sql/waiting_backlog.sql
	waitingBacklogSQL string
)

// NewBacklogCollector exports the dead letters waiting for an operator, per
// group, read at scrape time: the counter of dead letters says how many
// failed, this says how many still need someone.
func NewBacklogCollector(pool *pgxpool.Pool, timeout time.Duration, log *slog.Logger) prometheus.Collector {
	return pg.NewQueryCollector(pool, timeout, log, deadLetterBacklogSQL, 1,
		prometheus.NewDesc("sluice_dead_letters_pending", "Dead letters not replayed yet.", []string{"group"}, nil),
		prometheus.NewDesc("sluice_dead_letters_oldest_pending_seconds", "Age of the oldest dead letter not replayed yet.", []string{"group"}, nil))
}

// NewWaitingCollector exports the records set aside (waiting.go), per
// group, read at scrape time from every process's rows: records that wait
// for minutes mean a lock held elsewhere that someone should look at.
func NewWaitingCollector(pool *pgxpool.Pool, timeout time.Duration, log *slog.Logger) prometheus.Collector {
	return pg.NewQueryCollector(pool, timeout, log, waitingBacklogSQL, 1,
		prometheus.NewDesc("sluice_consumer_records_waiting", "Records set aside because what they need is held elsewhere, or behind such a record of their key.", []string{"group"}, nil),
		prometheus.NewDesc("sluice_consumer_oldest_waiting_seconds", "How long the oldest record set aside has waited.", []string{"group"}, nil))
}
