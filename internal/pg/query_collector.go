package pg

import (
	"context"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
)

// QueryCollector exports gauges read by one query at scrape time: each row
// holds a value for every label of the descriptions (text), then one value
// per description (float8). A scrape waits at most its timeout; a query
// that fails leaves the gauges out of that scrape, logged at debug.
type QueryCollector struct {
	pool    *pgxpool.Pool
	timeout time.Duration
	log     *slog.Logger
	sql     string
	args    []any
	labels  int
	descs   []*prometheus.Desc
	cache   *ScrapeCache
}

// NewQueryCollector builds a collector of sql's rows with labels label
// columns first; register it with the process's registry.
func NewQueryCollector(pool *pgxpool.Pool, timeout time.Duration, log *slog.Logger, sql string, labels int, descs ...*prometheus.Desc) *QueryCollector {
	return &QueryCollector{pool: pool, timeout: timeout, log: log, sql: sql, labels: labels, descs: descs, cache: NewScrapeCache(0)}
}

// WithArgs sets the query's parameters ($1, ...) and returns c.
func (c *QueryCollector) WithArgs(args ...any) *QueryCollector {
	c.args = args
	return c
}

// Describe implements prometheus.Collector.
func (c *QueryCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.descs {
		ch <- d
	}
}

// Collect implements prometheus.Collector; a read serves the scrapes of
// the next 5 seconds.
func (c *QueryCollector) Collect(ch chan<- prometheus.Metric) { c.cache.Collect(ch, c.read) }

func (c *QueryCollector) read(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	rows, err := c.pool.Query(ctx, c.sql, c.args...)
	if err != nil {
		c.log.Debug("metrics query failed", slog.Any("error", err))
		return
	}
	defer rows.Close()
	labels, values := make([]string, c.labels), make([]float64, len(c.descs))
	dest := make([]any, 0, c.labels+len(c.descs))
	for i := range labels {
		dest = append(dest, &labels[i])
	}
	for i := range values {
		dest = append(dest, &values[i])
	}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			c.log.Debug("metrics query failed", slog.Any("error", err))
			return
		}
		for i, d := range c.descs {
			ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, values[i], labels...)
		}
	}
}
