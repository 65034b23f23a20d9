package pg

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// ScrapeCache keeps what a collector that asks Postgres or Kafka read at its
// last scrape, and serves it again to scrapes that come sooner than every:
// several Prometheus servers, or a tool polling /metrics in a loop, then
// cost one read per interval instead of one per scrape.
type ScrapeCache struct {
	every time.Duration

	mu   sync.Mutex
	at   time.Time
	last []prometheus.Metric
}

// NewScrapeCache serves a read for every (default 5s).
func NewScrapeCache(every time.Duration) *ScrapeCache {
	if every <= 0 {
		every = 5 * time.Second
	}
	return &ScrapeCache{every: every}
}

// Collect sends the cached metrics, reading them anew with read when they
// are older than the interval.
func (c *ScrapeCache) Collect(ch chan<- prometheus.Metric, read func(chan<- prometheus.Metric)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.last == nil || time.Since(c.at) >= c.every {
		fresh := make(chan prometheus.Metric, 64)
		go func() {
			read(fresh)
			close(fresh)
		}()
		c.last = c.last[:0]
		for m := range fresh {
			c.last = append(c.last, m)
		}
		c.at = time.Now()
	}
	for _, m := range c.last {
		ch <- m
	}
}
