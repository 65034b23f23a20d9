package reconcile

import (
	"cmp"
	"context"
	"errors"
	"slices"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluicehq/sluice/internal/ingest"
	"github.com/sluicehq/sluice/internal/provider"
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

// RunOutcome is how a run ended: reconcile_runs.outcome and the runs
// metric's result label.
type RunOutcome string

const (
	// OutcomeOK: the window was read to its end.
	OutcomeOK RunOutcome = "ok"
	// OutcomePartial: the window was read to its end, but the provider
	// refused an optional lookup for want of a permission (Missing names
	// it). What was entered stays, the position moves on, and what the
	// lookup would have resolved stays waiting.
	OutcomePartial RunOutcome = "partial"
	// OutcomeBudget: the source's hourly request budget ran out; the next
	// run resumes from the last page saved.
	OutcomeBudget RunOutcome = "budget"
	// OutcomeIncomplete: the run reached one of its own bounds (its
	// deadline, waits for a throttling provider included, or MaxFetches);
	// the next resumes.
	OutcomeIncomplete RunOutcome = "incomplete"
	// OutcomeInterrupted: the process was stopping; the next run resumes.
	OutcomeInterrupted RunOutcome = "interrupted"
	// OutcomeFailed: an error (in the run's row and the log); the next run
	// resumes from the last page saved.
	OutcomeFailed RunOutcome = "failed"
	// OutcomeRefused: the run could not begin (credentials, a kind with no
	// API, a window that ends before it begins); nothing was asked.
	OutcomeRefused RunOutcome = "refused"
	// OutcomeRunning is a run under way, or, once another run of its
	// source began, OutcomeAbandoned: its process died.
	OutcomeRunning   RunOutcome = "running"
	OutcomeAbandoned RunOutcome = "abandoned"
)

// RunOutcomes lists every outcome a run's row may hold.
func RunOutcomes() []RunOutcome {
	return append(slices.Clone(counted), OutcomeRunning, OutcomeAbandoned)
}

// counted are the outcomes of the runs metric.
var counted = []RunOutcome{OutcomeOK, OutcomePartial, OutcomeBudget, OutcomeIncomplete, OutcomeInterrupted, OutcomeFailed, OutcomeRefused}

// outcomeOf decides how a run ended, once: from the caller's context (a
// stopping process), the run's own (its deadline) and the error.
func outcomeOf(ctx, runCtx context.Context, err error, missing string) RunOutcome {
	switch {
	case err == nil && missing != "":
		return OutcomePartial
	case err == nil:
		return OutcomeOK
	case errors.Is(err, ErrBudget):
		return OutcomeBudget
	case ctx.Err() != nil:
		return OutcomeInterrupted
	case errors.Is(err, errIncomplete), errors.Is(err, errThrottled), runCtx.Err() != nil:
		return OutcomeIncomplete
	}
	return OutcomeFailed
}

// Metrics are reconciliation's Prometheus metrics.
type Metrics struct {
	corrections *prometheus.CounterVec
	runs        *prometheus.CounterVec
	permissions *prometheus.CounterVec
	throttled   *prometheus.CounterVec
	waited      *prometheus.CounterVec
}

// NewMetrics registers the metrics with reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{corrections: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "sluice_reconcile_corrections_total",
		Help: "Corrections reconciliation made, by source kind and outcome (recovered, conflict, redelivery_requested).",
	}, []string{"kind", "outcome"}),
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_reconcile_runs_total",
			Help: "Reconcile runs of one source, by source kind and result: ok, partial (read to its end, an optional lookup refused for want of a permission), budget (the hourly API budget ran out; the next run resumes), incomplete (the run's deadline or fetch limit; the next resumes), interrupted, failed, refused (never began).",
		}, []string{"kind", "result"}),
		permissions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_reconcile_permission_refusals_total",
			Help: "Provider API requests refused for want of a permission of the source's credentials, by source kind and the permission the provider named.",
		}, []string{"kind", "permission"}),
		throttled: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_reconcile_throttled_total",
			Help: "Provider API answers 429 (too many requests) reconciliation waited out, by source kind.",
		}, []string{"kind"}),
		waited: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sluice_reconcile_throttle_wait_seconds_total",
			Help: "Seconds reconciliation waited before retrying a throttled or failed provider API request, by source kind.",
		}, []string{"kind"}),
	}
	reg.MustRegister(m.corrections, m.runs, m.permissions, m.throttled, m.waited)
	return m
}

// start makes the series of kinds exist at zero, so that a first failure or
// correction shows as an increase (rate and increase need two samples).
func (m *Metrics) start(kinds []provider.Kind) {
	for _, k := range kinds {
		for _, o := range []Outcome{OutcomeRecovered, OutcomeConflict, OutcomeRedeliveryRequested} {
			m.corrections.WithLabelValues(string(k), string(o))
		}
		for _, r := range counted {
			m.runs.WithLabelValues(string(k), string(r))
		}
		m.throttled.WithLabelValues(string(k))
		m.waited.WithLabelValues(string(k))
	}
}

// run counts a finished run of a source of kind (empty when its
// credentials could not be read).
func (m *Metrics) run(kind provider.Kind, o RunOutcome) {
	m.runs.WithLabelValues(cmp.Or(string(kind), "unknown"), string(o)).Inc()
}
