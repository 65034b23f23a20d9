package delivery

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluicehq/sluice/internal/store/endpoints"
)

// metrics are totals by outcome, never by endpoint (a label per endpoint
// would grow with tenants): per-endpoint figures are in the admin API.
type metrics struct {
	attempts *prometheus.CounterVec
	latency  prometheus.Histogram
	dead     prometheus.Counter
	disabled *prometheus.CounterVec
	// announced counts operational events written, by type.
	announced *prometheus.CounterVec
	backlog   prometheus.Gauge
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_delivery_attempts_total",
			Help: "Requests to tenants' endpoints, by outcome: delivered, or the failure's class (status, timeout, connect, tls, dns, refused_address, ...).",
		}, []string{"outcome"}),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "sluice_delivery_request_seconds",
			Help:    "How long tenants' endpoints took to answer.",
			Buckets: prometheus.ExponentialBuckets(0.005, 2.5, 10),
		}),
		dead: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "sluice_deliveries_dead_total",
			Help: "Deliveries given up after their retry horizon (kept, with every attempt, for replay).",
		}),
		disabled: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_endpoints_disabled_total",
			Help: "Endpoints the deliverer disabled, by reason: gone (answered 410), failing (every attempt failed for the failing horizon).",
		}, []string{"reason"}),
		announced: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_endpoint_events_total",
			Help: "Operational events the deliverer wrote about endpoints, by type (sluice.endpoint.failing, .disabled, .recovered): each once per transition.",
		}, []string{"type"}),
		backlog: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "sluice_delivery_backlog_age_seconds",
			Help: "Age of the oldest pending delivery among the endpoints this process owns (0: none waits); the highest across processes is the deployment's.",
		}),
	}
	for _, r := range []string{"gone", "failing"} {
		m.disabled.WithLabelValues(r)
	}
	for _, t := range endpoints.OperationalTypes() {
		m.announced.WithLabelValues(string(t))
	}
	m.attempts.WithLabelValues("delivered")
	if reg != nil {
		reg.MustRegister(m.attempts, m.latency, m.dead, m.disabled, m.announced, m.backlog)
	}
	return m
}

func (m *metrics) outcome(a endpoints.Attempt, died bool) {
	outcome := "delivered"
	if !a.OK() {
		outcome = a.ErrorClass
	}
	m.attempts.WithLabelValues(outcome).Inc()
	if a.Status != 0 || a.OK() {
		m.latency.Observe(float64(a.LatencyMS) / 1000)
	}
	if died {
		m.dead.Inc()
	}
}
