package cdc

import "github.com/prometheus/client_golang/prometheus"

type metrics struct {
	slot         string
	leader       prometheus.Gauge
	produced     prometheus.Counter
	acked        prometheus.Counter
	parked       prometheus.Counter
	backpressure prometheus.Counter
	inflight     prometheus.Gauge
	confirmedLSN prometheus.Gauge
	slotLagBytes prometheus.Gauge
	ackSeconds   prometheus.Histogram
}

func newMetrics(reg prometheus.Registerer, slot string) *metrics {
	labels := prometheus.Labels{"slot": slot}
	m := &metrics{
		slot:         slot,
		leader:       prometheus.NewGauge(prometheus.GaugeOpts{Name: "sluice_cdc_leader", Help: "1 while this process is the slot's active relay.", ConstLabels: labels}),
		produced:     prometheus.NewCounter(prometheus.CounterOpts{Name: "sluice_cdc_records_produced_total", Help: "Outbox rows handed to Kafka.", ConstLabels: labels}),
		acked:        prometheus.NewCounter(prometheus.CounterOpts{Name: "sluice_cdc_records_acked_total", Help: "Records acknowledged by Kafka.", ConstLabels: labels}),
		parked:       prometheus.NewCounter(prometheus.CounterOpts{Name: "sluice_cdc_records_parked_total", Help: "Records Kafka refused for good, kept in cdc_parked.", ConstLabels: labels}),
		backpressure: prometheus.NewCounter(prometheus.CounterOpts{Name: "sluice_cdc_backpressure_waits_total", Help: "Times the relay stopped reading because too many records were unacknowledged.", ConstLabels: labels}),
		inflight:     prometheus.NewGauge(prometheus.GaugeOpts{Name: "sluice_cdc_inflight_records", Help: "Records sent to Kafka and not yet acknowledged.", ConstLabels: labels}),
		confirmedLSN: prometheus.NewGauge(prometheus.GaugeOpts{Name: "sluice_cdc_confirmed_lsn", Help: "Last LSN confirmed to Postgres.", ConstLabels: labels}),
		slotLagBytes: prometheus.NewGauge(prometheus.GaugeOpts{Name: "sluice_cdc_slot_lag_bytes", Help: "WAL retained by the slot: current WAL LSN minus confirmed_flush_lsn.", ConstLabels: labels}),
		ackSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "sluice_cdc_ack_seconds", Help: "Time from reading a row off the slot to Kafka's acknowledgement.",
			ConstLabels: labels, Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16)}),
	}
	reg.MustRegister(m.leader, m.produced, m.acked, m.parked, m.backpressure, m.inflight, m.confirmedLSN, m.slotLagBytes, m.ackSeconds)
	return m
}
