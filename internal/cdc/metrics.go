package cdc

import "github.com/prometheus/client_golang/prometheus"

type metrics struct {
	slot              string
	leader            prometheus.Gauge
	produced          prometheus.Counter
	acked             prometheus.Counter
	parked            *prometheus.CounterVec
	retained          prometheus.Counter
	backpressure      prometheus.Counter
	inflight          prometheus.Gauge
	inflightBytes     prometheus.Gauge
	oldestUnconfirmed prometheus.Gauge
	confirmedLSN      prometheus.Gauge
	slotLagBytes      prometheus.Gauge
	ackSeconds        prometheus.Histogram
	commitToAck       prometheus.Histogram
}

func newMetrics(reg prometheus.Registerer, slot string) *metrics {
	labels := prometheus.Labels{"slot": slot}
	gauge := func(name, help string) prometheus.Gauge {
		return prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: help, ConstLabels: labels})
	}
	counter := func(name, help string) prometheus.Counter {
		return prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help, ConstLabels: labels})
	}
	m := &metrics{
		slot:     slot,
		leader:   gauge("sluice_cdc_leader", "1 while this process is the slot's active relay."),
		produced: counter("sluice_cdc_records_produced_total", "Outbox rows handed to Kafka."),
		acked:    counter("sluice_cdc_records_acked_total", "Records acknowledged by Kafka."),
		parked: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "sluice_cdc_records_parked_total", ConstLabels: labels,
			Help: "Records kept in cdc_parked instead of Kafka, by reason: refused (for good), unreadable (the row), missing_topic (after the grace), topic_not_authorized (the relay's Kafka user may not write its topic, after the grace)."},
			[]string{"reason"}),
		retained:          counter("sluice_cdc_outbox_rows_deleted_total", "Outbox rows removed after the retention window."),
		backpressure:      counter("sluice_cdc_backpressure_waits_total", "Times the relay stopped reading because too much was unacknowledged."),
		inflight:          gauge("sluice_cdc_inflight_records", "Records sent to Kafka and not yet acknowledged."),
		inflightBytes:     gauge("sluice_cdc_inflight_bytes", "Bytes of the records sent to Kafka and not yet acknowledged."),
		oldestUnconfirmed: gauge("sluice_cdc_oldest_unconfirmed_seconds", "Age (from its commit) of the oldest transaction read from the slot and not yet confirmable; 0 when caught up."),
		confirmedLSN:      gauge("sluice_cdc_confirmed_lsn", "Last LSN confirmed to Postgres."),
		slotLagBytes:      gauge("sluice_cdc_slot_lag_bytes", "WAL retained by the slot: current WAL LSN minus confirmed_flush_lsn."),
		ackSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "sluice_cdc_ack_seconds", Help: "Time from reading a row off the slot to Kafka's acknowledgement.",
			ConstLabels: labels, Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16)}),
		commitToAck: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "sluice_cdc_commit_to_ack_seconds",
			Help:        "Time from a row's commit in Postgres (its commit timestamp) to Kafka's acknowledgement; resync records have none.",
			ConstLabels: labels, Buckets: prometheus.ExponentialBuckets(0.0005, 2, 18)}),
	}
	for _, reason := range []string{ReasonRefused, ReasonUnreadable, ReasonMissingTopic} {
		m.parked.WithLabelValues(reason) // a series at 0 for each, so rates and alerts see it
	}
	reg.MustRegister(m.leader, m.produced, m.acked, m.parked, m.retained, m.backpressure, m.inflight, m.inflightBytes,
		m.oldestUnconfirmed, m.confirmedLSN, m.slotLagBytes, m.ackSeconds, m.commitToAck)
	return m
}
