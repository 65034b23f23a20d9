package consumers

import "github.com/prometheus/client_golang/prometheus"

type metrics struct {
	applied      prometheus.Counter
	deadLettered prometheus.Counter
	transient    prometheus.Counter
	deployment   prometheus.Counter
	oneByOne     prometheus.Counter
	batchSeconds prometheus.Histogram
	slotSeconds  prometheus.Histogram
	buffered     prometheus.Gauge
}

func newMetrics(reg prometheus.Registerer, group string) *metrics {
	labels := prometheus.Labels{"group": group}
	m := &metrics{
		applied:      prometheus.NewCounter(prometheus.CounterOpts{Name: "sluice_consumer_records_applied_total", Help: "Records applied (effects committed or found already done).", ConstLabels: labels}),
		deadLettered: prometheus.NewCounter(prometheus.CounterOpts{Name: "sluice_consumer_dead_letters_total", Help: "Records dead-lettered after their attempts ran out.", ConstLabels: labels}),
		transient:    prometheus.NewCounter(prometheus.CounterOpts{Name: "sluice_consumer_transient_failures_total", Help: "Batches retried after a transient failure.", ConstLabels: labels}),
		deployment: prometheus.NewCounter(prometheus.CounterOpts{Name: "sluice_consumer_deployment_errors_total",
			Help: "Batches retried because the deployment was at fault (undefined table or column, missing privilege): never dead-lettered.", ConstLabels: labels}),
		oneByOne: prometheus.NewCounter(prometheus.CounterOpts{Name: "sluice_consumer_batches_one_by_one_total",
			Help: "Set-based batches refused for a record's data and applied again record by record to find it.", ConstLabels: labels}),
		batchSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "sluice_consumer_batch_seconds", Help: "Time to apply and commit one batch.",
			ConstLabels: labels, Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16)}),
		slotSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "sluice_consumer_transaction_wait_seconds",
			Help: "Time a batch waited for a transaction slot (Transactions, Slots) before it began.", ConstLabels: labels,
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16)}),
		buffered: prometheus.NewGauge(prometheus.GaugeOpts{Name: "sluice_consumer_buffered_bytes",
			Help: "Bytes of records fetched and not yet applied, held against the group's MaxBufferedBytes.", ConstLabels: labels}),
	}
	reg.MustRegister(m.applied, m.deadLettered, m.transient, m.deployment, m.oneByOne, m.batchSeconds, m.slotSeconds, m.buffered)
	return m
}
