package dispatch

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluicehq/sluice/consumers"
)

// Results of one intent in sluice_dispatch_requests_total: a fixed
// vocabulary, so the series stay few.
const (
	resultDelivered   = "delivered"    // the service answered 2xx
	resultAlreadySent = "already_sent" // an earlier run had the 2xx; no call
	resultRetry       = "retry"        // 408, 429, 5xx or no answer: sent again
	resultRefused     = "refused"      // any other status: dead-lettered
	resultBreakerOpen = "breaker_open" // held back by the circuit breaker; no call
)

// metrics counts each intent's result and times the calls made.
type metrics struct {
	results *prometheus.CounterVec
	seconds *prometheus.HistogramVec
}

func newMetrics(reg prometheus.Registerer, group string) *metrics {
	if reg == nil {
		return nil
	}
	m := &metrics{
		results: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "sluice_dispatch_requests_total",
			Help:        "Intents by result: delivered, already_sent, retry, refused, breaker_open.",
			ConstLabels: prometheus.Labels{"group": group}}, []string{"result"}),
		seconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "sluice_dispatch_request_seconds",
			Help:        "Duration of the calls to the service, by result (delivered, retry, refused).",
			ConstLabels: prometheus.Labels{"group": group}, Buckets: prometheus.ExponentialBuckets(0.002, 2, 14)}, []string{"result"}),
	}
	reg.MustRegister(m.results, m.seconds)
	return m
}

// count records an intent that made no call.
func (m *metrics) count(result string) {
	if m != nil {
		m.results.WithLabelValues(result).Inc()
	}
}

// call records a call to the service that began at started and ended in err.
func (m *metrics) call(started time.Time, err error) {
	if m == nil {
		return
	}
	result := resultDelivered
	switch {
	case err == nil:
	case consumers.IsPermanent(err):
		result = resultRefused
	default:
		result = resultRetry
	}
	m.results.WithLabelValues(result).Inc()
	m.seconds.WithLabelValues(result).Observe(time.Since(started).Seconds())
}
