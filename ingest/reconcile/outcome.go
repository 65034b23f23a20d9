package reconcile

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluicehq/sluice/ingest"
)

// Outcome is what a correction did. It labels the metric and is stored in
// reconcile_corrections.outcome.
type Outcome string

const (
	// OutcomeRecovered: an event Sluice had never received entered the
	// inbox (published, or kept waiting, unhandled or quarantined as a
	// webhook of it would have been).
	OutcomeRecovered Outcome = "recovered"
	// OutcomeConflict: the provider's copy differs from the event Sluice
	// holds under its id; it is kept aside for an operator, as ingest keeps
	// every conflict.
	OutcomeConflict Outcome = "conflict"
	// OutcomeRedeliveryRequested: the provider was asked to deliver again
	// a delivery that had failed.
	OutcomeRedeliveryRequested Outcome = "redelivery_requested"
)

// correction maps what ingest did with a recovered event to a correction;
// a duplicate (Sluice had the event) is none.
func correction(o ingest.Outcome) (Outcome, bool) {
	switch o {
	case ingest.OutcomeDuplicate:
		return "", false
	case ingest.OutcomeConflict:
		return OutcomeConflict, true
	default:
		return OutcomeRecovered, true
	}
}

// Metrics are reconciliation's Prometheus metrics.
type Metrics struct {
	corrections *prometheus.CounterVec
	runs        *prometheus.CounterVec
}

// NewMetrics registers the metrics with reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		corrections: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_reconcile_corrections_total",
			Help: "Corrections reconciliation made, by source kind and outcome (recovered, conflict, redelivery_requested).",
		}, []string{"kind", "outcome"}),
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_reconcile_runs_total",
			Help: "Reconciliation runs of one source, by source kind and result (ok, failed: the provider's API, the credentials or the database refused).",
		}, []string{"kind", "result"}),
	}
	reg.MustRegister(m.corrections, m.runs)
	return m
}

// run counts a finished run of a source of kind.
func (m *Metrics) run(kind string, err error) {
	result := "ok"
	if err != nil {
		result = "failed"
	}
	if kind == "" {
		kind = "unknown"
	}
	m.runs.WithLabelValues(kind, result).Inc()
}
