package admin

import (
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/sluicehq/sluice/internal/ingest/reconcile"
)

// The answers of reconciliation's routes: reconcile's types, their
// schemas given the formats and vocabularies the document states, and a
// run's report as JSON.

// runOutcomes and runPhases are the vocabularies the document gives a
// run's outcome (reconcile.RunOutcome) and the phase it stood in.
var (
	runOutcomes = reconcile.RunOutcomes()
	runPhases   = reconcile.Phases()
)

// runOutcome stands for reconcile.RunOutcome in the document (a type
// alias of the schema registry), with its vocabulary.
type runOutcome string

func (runOutcome) Schema(huma.Registry) *huma.Schema {
	enum := make([]any, len(runOutcomes))
	for i, o := range runOutcomes {
		enum[i] = string(o)
	}
	return &huma.Schema{Type: huma.TypeString, Enum: enum,
		Description: "How the run ended: ok (read to its end), partial (read to its end, an optional lookup refused for want of missing_permission), " +
			"budget (the source's hourly API budget ran out), incomplete (the run's time or fetch limit), interrupted (the process was stopping), " +
			"failed (an error, in the run's row), refused (it never began), running, abandoned (its process died)."}
}

// ReconcileRun is a recorded run (reconcile.Run) as the document
// describes it.
type ReconcileRun struct{ reconcile.Run }

func (ReconcileRun) TransformSchema(_ huma.Registry, s *huma.Schema) *huma.Schema {
	return annotate(s, map[string]property{
		"id":                 {doc: "Run id."},
		"source_id":          {format: "uuid"},
		"since":              {doc: "The window's start; null: a refused run given none."},
		"until":              {doc: "The window's end (never after the run began)."},
		"automatic":          {doc: "The source's automatic window (the schedule's, or a run given no since and no until)."},
		"phase":              {enum: append([]string{""}, runPhases...), doc: "Where the run stood when it last saved: events, redeliver or fetch; empty: it never began."},
		"reached":            {doc: "How far back in the window its listing came."},
		"found":              {doc: "What the provider listed: events, failed deliveries, fetched objects."},
		"corrected":          {doc: "Events recovered or conflicting, redeliveries asked for."},
		"missing_permission": {doc: "The permission an optional lookup lacked (the run is partial)."},
		"error":              {doc: "Why a failed or refused run stopped."},
	})
}

// ReconcileStatus is where a reconciled source stands
// (reconcile.SourceStatus) as the document describes it.
type ReconcileStatus struct{ reconcile.SourceStatus }

func (ReconcileStatus) TransformSchema(_ huma.Registry, s *huma.Schema) *huma.Schema {
	return annotate(s, map[string]property{
		"source_id":       {format: "uuid"},
		"covered_until":   {doc: "Everything before it has been read to its end by the schedule; null: nothing yet."},
		"since":           {doc: "The automatic window in progress; null: none."},
		"phase":           {enum: runPhases, doc: "Where in the window in progress the last run stopped."},
		"reached":         {doc: "How far back the window in progress was listed: [since, reached) is left."},
		"waiting":         {doc: "Events held for their object (what a refused lookup leaves)."},
		"budget_used":     {doc: "Requests sent to the provider's API this clock hour, by every instance."},
		"budget":          {doc: "Requests allowed per hour; null: none sent this hour."},
		"next_request_at": {doc: "When the next request is allowed: now, or the next hour once the budget is spent."},
	})
}

// ReconcileReport is what a run did (reconcile.Report).
type ReconcileReport struct {
	RunID       int64                     `json:"run_id"`
	SourceID    string                    `json:"source_id" format:"uuid"`
	Kind        string                    `json:"kind"`
	Since       time.Time                 `json:"since" doc:"The window read."`
	Until       time.Time                 `json:"until"`
	DryRun      bool                      `json:"dry_run"`
	Automatic   bool                      `json:"automatic" doc:"The run read the source's automatic window."`
	Resumed     bool                      `json:"resumed" doc:"The run went on with a window an earlier run began."`
	Clamped     bool                      `json:"clamped" doc:"until was after now, and was cut at now."`
	Outcome     reconcile.RunOutcome      `json:"outcome"`
	Missing     string                    `json:"missing_permission,omitempty" doc:"A permission the provider refused for an optional lookup (the run is partial)."`
	Found       int                       `json:"found" doc:"What the provider listed: events, failed deliveries, fetched objects."`
	Pages       int                       `json:"pages"`
	Requests    int                       `json:"requests" doc:"Requests sent to the provider's API, throttled ones included."`
	Corrected   int                       `json:"corrected"`
	Corrections map[reconcile.Outcome]int `json:"corrections" nullable:"false" doc:"What the run changed, by outcome: recovered, conflict, redelivery_requested (a dry run: would have)."`
}

func reportOf(r reconcile.Report) ReconcileReport {
	out := ReconcileReport{RunID: r.RunID, SourceID: r.SourceID, Kind: string(r.Kind), Since: r.Window.Since, Until: r.Window.Until,
		DryRun: r.Window.DryRun, Automatic: r.Automatic, Resumed: r.Resumed, Clamped: r.Clamped, Outcome: r.Outcome, Missing: r.Missing,
		Found: r.Found, Pages: r.Pages, Requests: r.Requests, Corrected: r.Corrected(), Corrections: r.Corrections}
	if out.Corrections == nil {
		out.Corrections = map[reconcile.Outcome]int{}
	}
	return out
}

// SourceReconciliation is where a source's reconciliation stands, with its
// latest runs.
type SourceReconciliation struct {
	SourceID string           `json:"source_id" format:"uuid"`
	Status   *ReconcileStatus `json:"status,omitempty" doc:"Absent: the source has no API credentials, so it is not reconciled."`
	Runs     []ReconcileRun   `json:"runs" nullable:"false" doc:"Its latest runs, newest first, refused ones included."`
}

func runsOf(rs []reconcile.Run) []ReconcileRun {
	out := make([]ReconcileRun, len(rs))
	for i, r := range rs {
		out[i] = ReconcileRun{r}
	}
	return out
}

// property is what the document says of a field of another package's
// type beyond its Go type: a format, a vocabulary, a description.
type property struct {
	format, doc string
	enum        []string
}

// annotate sets properties on a generated schema; a name the schema lacks
// is a field renamed without its annotation, and panics at registration.
func annotate(s *huma.Schema, props map[string]property) *huma.Schema {
	for name, p := range props {
		ps, ok := s.Properties[name]
		if !ok {
			panic("admin: schema has no property " + name)
		}
		if p.format != "" {
			ps.Format = p.format
		}
		if p.doc != "" {
			ps.Description = p.doc
		}
		for _, e := range p.enum {
			ps.Enum = append(ps.Enum, e)
		}
	}
	return s
}
