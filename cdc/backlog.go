package cdc

import (
	_ "embed"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluicehq/sluice/internal/pg"
)

//go:embed sql/parked_backlog.sql
var parkedBacklogSQL string

// NewParkedCollector exports the parked records per slot, read at scrape
// time: each one is an event that never reached Kafka until an operator
// looks.
func NewParkedCollector(pool *pgxpool.Pool, timeout time.Duration, log *slog.Logger) prometheus.Collector {
	return pg.NewQueryCollector(pool, timeout, log, parkedBacklogSQL, 1,
		prometheus.NewDesc("sluice_cdc_parked_records", "Records Kafka refused for good, kept in cdc_parked.", []string{"slot"}, nil))
}
