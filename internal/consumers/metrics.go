package consumers

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

type metrics struct {
	applied        prometheus.Counter
	deadLettered   prometheus.Counter
	transient      prometheus.Counter
	deployment     prometheus.Counter
	lockWaits      prometheus.Counter
	oneByOne       prometheus.Counter
	setAside       prometheus.Counter
	waitingApplied prometheus.Counter
	batchSeconds   prometheus.Histogram
	batchRecords   prometheus.Histogram
	batchParts     prometheus.Histogram
	sharedFailed   prometheus.Counter
	waiting        prometheus.Gauge
	slotSeconds    prometheus.Histogram
	buffered       prometheus.Gauge
}

func newMetrics(reg prometheus.Registerer, group string) *metrics {
	labels := prometheus.Labels{"group": group}
	m := &metrics{
		applied:      prometheus.NewCounter(prometheus.CounterOpts{Name: "sluice_consumer_records_applied_total", Help: "Records applied (effects committed or found already done).", ConstLabels: labels}),
		deadLettered: prometheus.NewCounter(prometheus.CounterOpts{Name: "sluice_consumer_dead_letters_total", Help: "Records dead-lettered after their attempts ran out.", ConstLabels: labels}),
		transient:    prometheus.NewCounter(prometheus.CounterOpts{Name: "sluice_consumer_transient_failures_total", Help: "Batches retried after a transient failure.", ConstLabels: labels}),
		deployment: prometheus.NewCounter(prometheus.CounterOpts{Name: "sluice_consumer_deployment_errors_total",
			Help: "Batches retried because the deployment was at fault (undefined table or column, missing privilege): never dead-lettered.", ConstLabels: labels}),
		lockWaits: prometheus.NewCounter(prometheus.CounterOpts{Name: "sluice_consumer_lock_timeouts_total",
			Help: "Batches retried because a row they write was locked elsewhere longer than the lock timeout (counted among the transient failures too).", ConstLabels: labels}),
		oneByOne: prometheus.NewCounter(prometheus.CounterOpts{Name: "sluice_consumer_batches_one_by_one_total",
			Help: "Set-based batches refused for a record's data and applied again record by record to find it.", ConstLabels: labels}),
		setAside: prometheus.NewCounter(prometheus.CounterOpts{Name: "sluice_consumer_records_set_aside_total",
			Help: "Records set aside (consumer_waiting) because what they need was held elsewhere, or behind such a record of their key: the partition's offset moved past them.", ConstLabels: labels}),
		waitingApplied: prometheus.NewCounter(prometheus.CounterOpts{Name: "sluice_consumer_waiting_applied_total",
			Help: "Records set aside and then applied or dead-lettered by a retry.", ConstLabels: labels}),
		batchSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "sluice_consumer_batch_seconds", Help: "Time to apply and commit one batch transaction.",
			ConstLabels: labels, Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16)}),
		batchRecords: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "sluice_consumer_batch_records", Help: "Records in one committed batch transaction.",
			ConstLabels: labels, Buckets: prometheus.ExponentialBuckets(1, 2, 14)}),
		batchParts: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "sluice_consumer_batch_partitions",
			Help: "Partitions whose batches shared one committed batch transaction.", ConstLabels: labels, Buckets: prometheus.ExponentialBuckets(1, 2, 8)}),
		sharedFailed: prometheus.NewCounter(prometheus.CounterOpts{Name: "sluice_consumer_shared_batches_failed_total",
			Help: "Shared batch transactions that failed; each of their partitions' batches was then applied alone.", ConstLabels: labels}),
		waiting: prometheus.NewGauge(prometheus.GaugeOpts{Name: "sluice_consumer_batches_waiting",
			Help: "Partitions' batches waiting for one of the group's transactions (Transactions); they share the next one.", ConstLabels: labels}),
		slotSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "sluice_consumer_transaction_wait_seconds",
			Help: "Time a batch waited for a transaction slot (Transactions, Slots) before it began.", ConstLabels: labels,
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16)}),
		buffered: prometheus.NewGauge(prometheus.GaugeOpts{Name: "sluice_consumer_buffered_bytes",
			Help: "Bytes of records fetched and not yet applied, held against the group's MaxBufferedBytes.", ConstLabels: labels}),
	}
	reg.MustRegister(m.applied, m.deadLettered, m.transient, m.deployment, m.lockWaits, m.oneByOne, m.setAside, m.waitingApplied, m.batchSeconds, m.batchRecords, m.batchParts, m.sharedFailed,
		m.waiting, m.slotSeconds, m.buffered)
	return m
}

// committed observes one committed batch transaction.
func (m *metrics) committed(elapsed time.Duration, records, partitions int) {
	m.batchSeconds.Observe(elapsed.Seconds())
	m.batchRecords.Observe(float64(records))
	m.batchParts.Observe(float64(partitions))
}
