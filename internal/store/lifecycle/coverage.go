package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluicehq/sluice/internal/pg"
)

// coverage is how long from now a table can still take rows: up to the end
// of the run of contiguous partitions that holds now; 0 when none holds now
// (an insert fails: "no partition of relation found for row"). A partition
// half detached takes no rows and counts for nothing.
func coverage(have []partition, now time.Time) time.Duration {
	at := now
	for _, p := range have { // sorted by lower bound
		if !p.pending && !p.from.After(at) && p.to.After(at) {
			at = p.to
		}
	}
	return at.Sub(now)
}

// Coverage reads each partitioned table's coverage at now.
func Coverage(ctx context.Context, pool *pgxpool.Pool, now time.Time) (map[string]time.Duration, error) {
	out := make(map[string]time.Duration, len(tables))
	for _, t := range tables {
		have, err := listPartitions(ctx, pool, t.name)
		if err != nil {
			return nil, err
		}
		out[t.name] = coverage(have, now)
	}
	return out, nil
}

// ErrPartitionsRunningOut: a partitioned table has less coverage left than
// a readiness check allows; the lifecycle manager has not run, or failed,
// for that long.
var ErrPartitionsRunningOut = errors.New("lifecycle: partitions running out")

// CheckAhead fails when any partitioned table has less than one Interval of
// partitions left from now (the current partition is its last, where the
// manager keeps Ahead beyond it): the early warning, while writes still
// work, for the operators' readiness.
func (m *Manager) CheckAhead(ctx context.Context) error {
	return m.check(ctx, m.cfg.Interval, func(table) bool { return true })
}

// CheckWritable fails when a table ingest writes has no partition holding
// now: deliveries fail until one exists. Ingest's own readiness asks this
// one only, so a load balancer takes ingest out when it cannot write, not
// an Interval early while it still can.
func (m *Manager) CheckWritable(ctx context.Context) error {
	return m.check(ctx, time.Nanosecond, func(t table) bool { return t.ingest })
}

func (m *Manager) check(ctx context.Context, least time.Duration, which func(table) bool) error {
	now := m.cfg.Now()
	var short []string
	for _, t := range tables {
		if !which(t) {
			continue
		}
		have, err := listPartitions(ctx, m.pool, t.name)
		if err != nil {
			return err
		}
		if left := coverage(have, now); left < least {
			short = append(short, fmt.Sprintf("%s has %s left", t.name, left.Round(time.Second)))
		}
	}
	if len(short) > 0 {
		return fmt.Errorf("%w (want at least %s from now; is the lifecycle manager running?): %s",
			ErrPartitionsRunningOut, least, strings.Join(short, ", "))
	}
	return nil
}

// coverageCollector exports sluice_lifecycle_partition_coverage_seconds
// per table, read at scrape time (cached as every scrape-time read is), so
// it tells the truth when no manager runs at all.
type coverageCollector struct {
	m     *Manager
	desc  *prometheus.Desc
	cache *pg.ScrapeCache
}

func newCoverageCollector(m *Manager) *coverageCollector {
	return &coverageCollector{m: m, cache: pg.NewScrapeCache(0), desc: prometheus.NewDesc("sluice_lifecycle_partition_coverage_seconds",
		"Seconds from now that the table's partitions still cover (0: writes to it fail); the manager keeps Ahead+1 intervals.",
		[]string{"table"}, nil)}
}

func (c *coverageCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *coverageCollector) Collect(ch chan<- prometheus.Metric) { c.cache.Collect(ch, c.read) }

func (c *coverageCollector) read(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	left, err := Coverage(ctx, c.m.pool, c.m.cfg.Now())
	if err != nil {
		c.m.log.Debug("partition coverage", slog.Any("error", err))
		return
	}
	for name, d := range left {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, d.Seconds(), name)
	}
}

// CheckOwner fails unless the manager's role owns every partitioned table:
// creating, detaching and dropping partitions needs ownership (Postgres
// 15 has no MAINTAIN privilege), and without it partitions run out a few
// intervals later. The manager runs as the schema's owner
// (SLUICE_OWNER_DATABASE_URL) while the stage it runs beside connects as
// its own role.
func (m *Manager) CheckOwner(ctx context.Context) error {
	names := make([]string, len(tables))
	for i, t := range tables {
		names[i] = t.name
	}
	return pg.CheckOwns(ctx, m.pool, "lifecycle",
		"it cannot create partitions of it (Postgres 15 has no MAINTAIN privilege: only the owner may)",
		"give the lifecycle manager the owner's connection with SLUICE_OWNER_DATABASE_URL (or run `sluice lifecycle` as {owner})", names...)
}
