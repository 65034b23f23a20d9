package cdc

import (
	_ "embed"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluicehq/sluice/internal/pg"
)

var (
	//go:embed sql/parked_backlog.sql
	parkedBacklogSQL string
	//go:embed sql/slot_health.sql
	slotHealthSQL string
)

// NewParkedCollector exports the parked records per slot, read at scrape
// time: each one is an event that never reached Kafka until an operator
// looks. slot, the relay's own, is exported at 0 when it has none.
func NewParkedCollector(pool *pgxpool.Pool, slot string, timeout time.Duration, log *slog.Logger) prometheus.Collector {
	return pg.NewQueryCollector(pool, timeout, log, parkedBacklogSQL, 1,
		prometheus.NewDesc("sluice_cdc_parked_records", "Records Kafka refused for good, kept in cdc_parked.", []string{"slot"}, nil)).WithArgs(slot)
}

// NewSlotCollector exports slot's state as Postgres holds it, read at
// scrape time by every process that runs a relay, leader or standby: the
// relay's own gauges go quiet exactly when the slot is lost or nobody
// streams from it.
func NewSlotCollector(pool *pgxpool.Pool, slot string, timeout time.Duration, log *slog.Logger) prometheus.Collector {
	labels := []string{"slot"}
	return pg.NewQueryCollector(pool, timeout, log, slotHealthSQL, 1,
		prometheus.NewDesc("sluice_cdc_slot_active", "1 while a walsender streams from the slot (a relay leads it).", labels, nil),
		prometheus.NewDesc("sluice_cdc_slot_lost", "1 when the slot the relay had known is gone or invalidated (wal_status lost): run sluice cdc resync.", labels, nil),
		prometheus.NewDesc("sluice_cdc_slot_retained_wal_bytes", "WAL the slot keeps from being recycled: current WAL LSN minus restart_lsn.", labels, nil),
	).WithArgs(slot)
}
