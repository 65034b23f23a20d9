package dispatch

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are one dispatcher's: what the service answered, how fast, and
// the breaker in front of it. A nil Registerer makes them no-ops.
type metrics struct {
	requests *prometheus.CounterVec
	seconds  prometheus.Histogram
	state    prometheus.Gauge
	opened   prometheus.Counter
}

func newMetrics(reg prometheus.Registerer, group string) *metrics {
	if reg == nil {
		return nil
	}
	labels := prometheus.Labels{"group": group}
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "sluice_dispatch_requests_total",
			Help: "Calls to the service by HTTP status code, or error when no answer came (timeout, connection lost: an uncertain outcome, sent again).", ConstLabels: labels}, []string{"code"}),
		seconds: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "sluice_dispatch_request_seconds",
			Help: "Time from a call to the service's answer (or its failure).", ConstLabels: labels, Buckets: prometheus.ExponentialBuckets(0.005, 2, 12)}),
		state: prometheus.NewGauge(prometheus.GaugeOpts{Name: "sluice_dispatch_breaker_state",
			Help: "The dispatcher's circuit breaker: 0 closed, 1 open, 2 half-open.", ConstLabels: labels}),
		opened: prometheus.NewCounter(prometheus.CounterOpts{Name: "sluice_dispatch_breaker_opened_total",
			Help: "Times the dispatcher's circuit breaker opened.", ConstLabels: labels}),
	}
	reg.MustRegister(m.requests, m.seconds, m.state, m.opened)
	return m
}

// breakerState reports the breaker's state and counts openings.
func (m *metrics) breakerState(s BreakerState) {
	if m == nil {
		return
	}
	m.state.Set(float64(s))
	if s == BreakerOpen {
		m.opened.Inc()
	}
}

// instrument returns a copy of c whose calls are counted and timed.
func (m *metrics) instrument(c *http.Client) *http.Client {
	if m == nil {
		return c
	}
	next := c.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	out := *c
	out.Transport = roundTripper(func(r *http.Request) (*http.Response, error) {
		started := time.Now()
		resp, err := next.RoundTrip(r)
		m.seconds.Observe(time.Since(started).Seconds())
		code := "error"
		if err == nil {
			code = strconv.Itoa(resp.StatusCode)
		}
		m.requests.WithLabelValues(code).Inc()
		return resp, err
	})
	return &out
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
