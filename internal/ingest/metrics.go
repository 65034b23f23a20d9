package ingest

import (
	"strconv"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"
)

type metrics struct {
	requests      *prometheus.CounterVec
	events        *prometheus.CounterVec
	latency       *prometheus.HistogramVec
	commitSeconds prometheus.Histogram
	batchSize     prometheus.Histogram
	tenants       *prometheus.CounterVec // nil unless asked for
}

func newMetrics(reg prometheus.Registerer, perTenant bool) *metrics {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_ingest_requests_total",
			Help: "Requests by the source's kind (unknown before it is known, api for POST /v1/events), HTTP status code and outcome (accepted, duplicate, conflict, quarantined, unhandled, waiting) or rejection reason.",
		}, []string{"kind", "code", "outcome"}),
		events: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_ingest_batch_events_total",
			Help: "Events of POST /v1/events batches by outcome (a batch is one request in sluice_ingest_requests_total).",
		}, []string{"outcome"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "sluice_ingest_request_seconds",
			Help:    "Time from request to answer, by the source's kind and HTTP status code.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16),
		}, []string{"kind", "code"}),
		commitSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "sluice_ingest_commit_seconds",
			Help:    "Duration of one group-commit transaction.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16),
		}),
		batchSize: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "sluice_ingest_commit_batch_size",
			Help:    "Deliveries per group-commit transaction.",
			Buckets: prometheus.ExponentialBuckets(1, 2, 11),
		}),
	}
	reg.MustRegister(m.requests, m.events, m.latency, m.commitSeconds, m.batchSize)
	if perTenant {
		m.tenants = prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_ingest_tenant_requests_total",
			Help: "Requests by tenant, the source's kind and HTTP status code (--metrics-per-tenant).",
		}, []string{"tenant", "kind", "code"})
		reg.MustRegister(m.tenants)
	}
	return m
}

// Keys of what a request's handlers learned, for observe.
const (
	kindKey    = "sluice.kind"
	tenantKey  = "sluice.tenant"
	outcomeKey = "sluice.outcome"
)

// observe counts a finished request once, with what its handlers learned:
// the source's kind (bounded by the registry) and the outcome or rejection
// reason (a fixed vocabulary), and the status it was answered with.
func (m *metrics) observe(c *gin.Context, started time.Time) {
	kind, outcome := c.GetString(kindKey), c.GetString(outcomeKey)
	if kind == "" {
		kind = "unknown"
	}
	if outcome == "" {
		outcome = "unanswered"
	}
	code := strconv.Itoa(c.Writer.Status())
	m.requests.WithLabelValues(kind, code, outcome).Inc()
	m.latency.WithLabelValues(kind, code).Observe(time.Since(started).Seconds())
	// Only requests that named an existing source or API key carry a
	// tenant: a sender cannot mint series for tenants that do not exist.
	if tenant := c.GetString(tenantKey); m.tenants != nil && tenant != "" {
		m.tenants.WithLabelValues(tenant, kind, code).Inc()
	}
}
