package ingest

import "github.com/prometheus/client_golang/prometheus"

type metrics struct {
	requests      *prometheus.CounterVec
	latency       prometheus.Histogram
	commitSeconds prometheus.Histogram
	batchSize     prometheus.Histogram
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_ingest_requests_total",
			Help: "Webhook deliveries by outcome (accepted, duplicate, conflict, quarantined, unhandled, waiting) or rejection reason.",
		}, []string{"outcome"}),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "sluice_ingest_request_seconds",
			Help:    "Time from request to answer, for requests that reached the commit path.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16),
		}),
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
	reg.MustRegister(m.requests, m.latency, m.commitSeconds, m.batchSize)
	return m
}
