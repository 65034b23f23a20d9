package offsets

import (
	"context"
	"log/slog"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/sluicehq/sluice/internal/pg"
	"github.com/twmb/franz-go/pkg/kadm"
)

// LagCollector exports each group's lag per topic and partition, read from
// Kafka at scrape time (committed offsets, as Kafka UI and Burrow read
// them), so an alert needs no CLI. A scrape waits at most timeout for Kafka;
// a group Kafka cannot describe then is left out, and the failure counted.
type LagCollector struct {
	adm     *kadm.Client
	groups  []string
	timeout time.Duration
	log     *slog.Logger

	lag, committed *prometheus.Desc
	failures       prometheus.Counter
	cache          *pg.ScrapeCache
}

// NewLagCollector collects the lag of groups; register it with the process's
// registry.
func NewLagCollector(adm *kadm.Client, groups []string, timeout time.Duration, log *slog.Logger) *LagCollector {
	labels := []string{"group", "topic", "partition"}
	return &LagCollector{adm: adm, groups: groups, timeout: timeout, log: log,
		lag:       prometheus.NewDesc("sluice_consumer_lag_records", "Records between a group's committed offset and the partition's end (from the log start when it never committed).", labels, nil),
		committed: prometheus.NewDesc("sluice_consumer_committed_offset", "A group's committed offset; -1 when it never committed.", labels, nil),
		failures:  prometheus.NewCounter(prometheus.CounterOpts{Name: "sluice_consumer_lag_read_failures_total", Help: "Scrapes that could not read consumer lag from Kafka."}),
		cache:     pg.NewScrapeCache(0),
	}
}

// Describe implements prometheus.Collector.
func (c *LagCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.lag
	ch <- c.committed
	c.failures.Describe(ch)
}

// Collect implements prometheus.Collector; a read serves the scrapes of the
// next 5 seconds, so a tool polling /metrics does not poll Kafka with it.
func (c *LagCollector) Collect(ch chan<- prometheus.Metric) {
	c.cache.Collect(ch, c.read)
	c.failures.Collect(ch)
}

func (c *LagCollector) read(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	rows, err := Lag(ctx, c.adm, c.groups...)
	if err != nil {
		c.failures.Inc()
		c.log.Debug("consumer lag not read", slog.Any("error", err))
	}
	for _, r := range rows {
		if r.Topic == "" {
			continue // a group that never ran has no partitions yet
		}
		labels := []string{r.Group, r.Topic, strconv.Itoa(int(r.Partition))}
		ch <- prometheus.MustNewConstMetric(c.lag, prometheus.GaugeValue, float64(r.Lag), labels...)
		ch <- prometheus.MustNewConstMetric(c.committed, prometheus.GaugeValue, float64(r.Committed), labels...)
	}
}
