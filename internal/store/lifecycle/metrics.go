package lifecycle

import "github.com/prometheus/client_golang/prometheus"

type metrics struct {
	created   *prometheus.CounterVec
	dropped   *prometheus.CounterVec
	droppedB  *prometheus.CounterVec
	droppedR  *prometheus.CounterVec
	keys      prometheus.Counter
	resolved  *prometheus.CounterVec
	aged      *prometheus.CounterVec
	walBytes  prometheus.Counter
	failures  prometheus.Counter
	passes    prometheus.Counter
	passSecs  prometheus.Counter
	lastPassS prometheus.Gauge

	// aged's series, which exist from the start at zero.
	agedRuns, agedCorrections, agedLinks, agedIdempotencyKeys prometheus.Counter
	agedDeliveries, agedDeliveryAttempts                      prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		created: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "sluice_lifecycle_partitions_created_total",
			Help: "Time partitions created ahead of need."}, []string{"table"}),
		dropped: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "sluice_lifecycle_partitions_dropped_total",
			Help: "Time partitions dropped whole once past their table's horizon."}, []string{"table"}),
		droppedB: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "sluice_lifecycle_dropped_bytes_total",
			Help: "Size (table, indexes, TOAST) of the partitions dropped."}, []string{"table"}),
		droppedR: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "sluice_lifecycle_dropped_rows_total",
			Help: "Rows of the partitions dropped (the planner's estimate, pg_class.reltuples)."}, []string{"table"}),
		keys: prometheus.NewCounter(prometheus.CounterOpts{Name: "sluice_lifecycle_keys_deleted_total",
			Help: "Event keys (inbox rows) deleted past the key horizon."}),
		resolved: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "sluice_lifecycle_resolved_deleted_total",
			Help: "Rows an operator resolved (dead letters replayed, parked records released) deleted past the payload horizon."}, []string{"table"}),
		aged: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "sluice_lifecycle_aged_deleted_total",
			Help: "Rows of plain tables deleted past their horizon: reconciliation runs and their corrections (key horizon; each source's watermark run is kept), object links (links horizon), the admin API's Idempotency-Keys (a day), deliveries to endpoints and their attempts (payload horizon)."}, []string{"table"}),
		walBytes: prometheus.NewCounter(prometheus.CounterOpts{Name: "sluice_lifecycle_pass_wal_bytes_total",
			Help: "WAL written while passes ran (LSN difference around each pass: an upper bound, concurrent writes count too)."}),
		failures: prometheus.NewCounter(prometheus.CounterOpts{Name: "sluice_lifecycle_pass_failures_total",
			Help: "Passes that failed (retried at the next tick)."}),
		passes: prometheus.NewCounter(prometheus.CounterOpts{Name: "sluice_lifecycle_passes_total",
			Help: "Passes this process ran while holding the lifecycle lock."}),
		passSecs: prometheus.NewCounter(prometheus.CounterOpts{Name: "sluice_lifecycle_pass_seconds_total",
			Help: "Time spent in passes (with the WAL counter, to take out what concurrent writes added)."}),
		lastPassS: prometheus.NewGauge(prometheus.GaugeOpts{Name: "sluice_lifecycle_last_pass_timestamp_seconds",
			Help: "When this process last completed a pass."}),
	}
	// Each table's counters exist from the start at zero, so the first
	// partition created or dropped, or row aged out, shows as an increase.
	for _, t := range tables {
		for _, v := range []*prometheus.CounterVec{m.created, m.dropped, m.droppedB, m.droppedR} {
			v.WithLabelValues(t.name)
		}
	}
	m.agedRuns, m.agedCorrections = m.aged.WithLabelValues("reconcile_runs"), m.aged.WithLabelValues("reconcile_corrections")
	m.agedLinks = m.aged.WithLabelValues("object_links")
	m.agedIdempotencyKeys = m.aged.WithLabelValues("admin_idempotency_keys")
	m.agedDeliveries, m.agedDeliveryAttempts = m.aged.WithLabelValues("deliveries"), m.aged.WithLabelValues("delivery_attempts")
	if reg != nil {
		reg.MustRegister(m.created, m.dropped, m.droppedB, m.droppedR, m.keys, m.resolved, m.aged, m.walBytes, m.failures, m.passes, m.passSecs, m.lastPassS)
	}
	return m
}
