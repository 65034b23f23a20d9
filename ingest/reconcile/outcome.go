package reconcile

import (
	"cmp"
	"errors"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluicehq/sluice/ingest"
	"github.com/sluicehq/sluice/ingest/provider"
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

// Results of a run, the runs metric's result label.
const (
	resultOK     = "ok"
	resultFailed = "failed"
	resultBudget = "budget"
)

// NewMetrics registers the metrics with reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{corrections: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "sluice_reconcile_corrections_total",
		Help: "Corrections reconciliation made, by source kind and outcome (recovered, conflict, redelivery_requested).",
	}, []string{"kind", "outcome"}),
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_reconcile_runs_total",
			Help: "Reconcile runs of one source, by source kind and result: ok, failed (the error is in the run's row and the log), budget (the source's hourly API budget ran out; the next run resumes).",
		}, []string{"kind", "result"})}
	reg.MustRegister(m.corrections, m.runs)
	return m
}

// start makes the series of kinds exist at zero, so that a first failure or
// correction shows as an increase (rate and increase need two samples).
func (m *Metrics) start(kinds []provider.Kind) {
	for _, k := range kinds {
		for _, o := range []Outcome{OutcomeRecovered, OutcomeConflict, OutcomeRedeliveryRequested} {
			m.corrections.WithLabelValues(string(k), string(o))
		}
		for _, r := range []string{resultOK, resultFailed, resultBudget} {
			m.runs.WithLabelValues(string(k), r)
		}
	}
}

// run counts a finished run of a source of kind (empty when its
// credentials could not be read).
func (m *Metrics) run(kind provider.Kind, err error) {
	result := resultOK
	switch {
	case errors.Is(err, ErrBudget):
		result = resultBudget
	case err != nil:
		result = resultFailed
	}
	m.runs.WithLabelValues(cmp.Or(string(kind), "unknown"), result).Inc()
}
