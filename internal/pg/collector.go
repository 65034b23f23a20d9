package pg

import (
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
)

// PoolCollector exports a connection pool's state: a pool whose acquires
// wait is the first sign of a database that cannot keep up.
type PoolCollector struct {
	pool                                       *pgxpool.Pool
	acquired, idle, total, max                 *prometheus.Desc
	acquires, emptyAcquires, waitSeconds, news *prometheus.Desc
}

// NewPoolCollector collects pool's stats; register it with the process's
// registry.
func NewPoolCollector(pool *pgxpool.Pool) *PoolCollector {
	d := func(name, help string) *prometheus.Desc {
		return prometheus.NewDesc("sluice_pg_pool_"+name, help, nil, nil)
	}
	return &PoolCollector{pool: pool,
		acquired:      d("acquired_connections", "Connections in use."),
		idle:          d("idle_connections", "Connections open and free."),
		total:         d("connections", "Connections open."),
		max:           d("max_connections", "The pool's bound."),
		acquires:      d("acquires_total", "Connections handed out."),
		emptyAcquires: d("empty_acquires_total", "Acquires that found no free connection and waited or opened one."),
		waitSeconds:   d("acquire_wait_seconds_total", "Time spent waiting for a connection."),
		news:          d("new_connections_total", "Connections opened."),
	}
}

// Describe implements prometheus.Collector.
func (c *PoolCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.acquired, c.idle, c.total, c.max, c.acquires, c.emptyAcquires, c.waitSeconds, c.news} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *PoolCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.pool.Stat()
	gauge := func(d *prometheus.Desc, v float64) { ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v) }
	counter := func(d *prometheus.Desc, v float64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v)
	}
	gauge(c.acquired, float64(s.AcquiredConns()))
	gauge(c.idle, float64(s.IdleConns()))
	gauge(c.total, float64(s.TotalConns()))
	gauge(c.max, float64(s.MaxConns()))
	counter(c.acquires, float64(s.AcquireCount()))
	counter(c.emptyAcquires, float64(s.EmptyAcquireCount()))
	counter(c.waitSeconds, s.AcquireDuration().Seconds())
	counter(c.news, float64(s.NewConnsCount()))
}
