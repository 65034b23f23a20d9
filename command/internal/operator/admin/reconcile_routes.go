package admin

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"reflect"
	"slices"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humagin"

	"github.com/sluicehq/sluice/internal/audit"
	"github.com/sluicehq/sluice/internal/ingest/reconcile"
	"github.com/sluicehq/sluice/internal/provider"
	"github.com/sluicehq/sluice/internal/store/tenancy"
)

// ReconcileRunTimeout bounds a run started by request
// (Config.Reconciler's RunTimeout): the request waits for it. A window
// larger than a run reads in that time ends incomplete; it is for
// `sluice reconcile` or the schedule, whose automatic window resumes where
// a run stopped.
const ReconcileRunTimeout = 5 * time.Minute

// reconcileWriteGrace is how long past ReconcileRunTimeout a run's answer
// may still be written: the lock, the window and the run's row around it.
const reconcileWriteGrace = time.Minute

// RunLimit is how many runs a list holds (exported: see PageQuery).
type RunLimit struct {
	Limit int `query:"limit" minimum:"1" maximum:"200" default:"20" doc:"Most runs listed, newest first."`
}

// runsQuery selects the runs listed.
type runsQuery struct {
	RunLimit
	SourceID string `query:"source_id" format:"uuid" doc:"Only this source's runs."`
	TenantID string `query:"tenant_id" format:"uuid" doc:"Only the runs of this tenant's sources."`
}

// ReconcileSourcePath names the source a reconciliation route is about.
type ReconcileSourcePath struct {
	SourceID string `path:"source_id" format:"uuid" doc:"Source id."`
}

// ReconcileBody is the window a run started by request reads.
type ReconcileBody struct {
	Since  *time.Time `json:"since,omitempty" doc:"Start of a manual window; absent with until: the source's automatic window, resumed where the last run stopped; absent alone: where the automatic position stands."`
	Until  *time.Time `json:"until,omitempty" doc:"End of a manual window; absent: now. A time after now is cut at now (clamped)."`
	DryRun bool       `json:"dry_run,omitempty" doc:"Report what would be recovered or redelivered; enter, ask for and save nothing."`
}

func (b *ReconcileBody) window() provider.Window {
	var w provider.Window
	if b == nil {
		return w
	}
	w.DryRun = b.DryRun
	if b.Since != nil {
		w.Since = *b.Since
	}
	if b.Until != nil {
		w.Until = *b.Until
	}
	return w
}

// reconcileRoutes registers reconciliation: where a source stands and its
// latest runs, the latest runs across sources, and a run of one source
// started by request (through Config.Reconciler: 503 without one).
func reconcileRoutes(a *API) {
	a.api.OpenAPI().Components.Schemas.RegisterTypeAlias(reflect.TypeFor[reconcile.RunOutcome](), reflect.TypeFor[runOutcome]())
	type sourceIn struct {
		ReconcileSourcePath
		RunLimit
	}
	Handle(a, Route{Op: op("get-source-reconciliation", http.MethodGet, "/sources/{source_id}/reconcile",
		"Where the source's reconciliation stands (its automatic window, budget, what waits) and its latest runs", "reconciliation"),
		Scope: ScopeTenant},
		func(ctx context.Context, c Call, in *sourceIn) (*body[SourceReconciliation], error) {
			if _, err := c.Store.Source(ctx, in.SourceID); err != nil {
				return nil, err
			}
			statuses, err := reconcile.Sources(ctx, a.cfg.Pool, in.SourceID)
			if err != nil {
				return nil, err
			}
			runs, err := reconcile.Runs(ctx, a.cfg.Pool, in.SourceID, in.Limit)
			if err != nil {
				return nil, err
			}
			out := SourceReconciliation{SourceID: in.SourceID, Runs: runsOf(runs)}
			if len(statuses) > 0 {
				out.Status = &ReconcileStatus{statuses[0]}
			}
			return reply(out), nil
		})
	type runsOut struct {
		Body struct {
			Items []ReconcileRun `json:"items" nullable:"false"`
		}
	}
	Handle(a, Route{Op: op("list-reconcile-runs", http.MethodGet, "/reconcile/runs",
		"The latest reconciliation runs across sources, newest first", "reconciliation"), Scope: ScopeTenant},
		func(ctx context.Context, c Call, in *runsQuery) (*runsOut, error) {
			runs, err := a.runs(ctx, c, *in)
			if err != nil {
				return nil, err
			}
			out := &runsOut{}
			out.Body.Items = runsOf(runs)
			return out, nil
		})
	type runIn struct {
		ReconcileSourcePath
		Body *ReconcileBody // absent: {}, the automatic window
	}
	run := op("reconcile-source", http.MethodPost, "/sources/{source_id}/reconcile",
		"Reconcile the source now, or dry-run it, over a window (absent: its automatic window); answers when the run ends, "+
			fmt.Sprintf("within %d minutes: a larger window is for sluice reconcile or the schedule, which resume where a run stopped",
				int(ReconcileRunTimeout.Minutes())), "reconciliation")
	run.DefaultStatus = http.StatusOK
	// 400: a body that is no JSON; 502: the run failed (its row says why).
	run.Errors = []int{http.StatusBadRequest, http.StatusBadGateway}
	run.Middlewares = huma.Middlewares{extendWriteDeadline(ReconcileRunTimeout + reconcileWriteGrace)}
	Handle(a, Route{Op: run, Scope: ScopeTenant, Resource: "source", Action: "source.reconcile"},
		func(ctx context.Context, c Call, in *runIn) (*body[ReconcileReport], error) {
			if a.cfg.Reconciler == nil {
				return nil, huma.Error503ServiceUnavailable("reconciliation is not available on this listener: its process does not ingest; " +
					"ask the admin listener of one that does, or run sluice reconcile")
			}
			src, err := c.Store.Source(ctx, in.SourceID)
			if err != nil {
				return nil, err
			}
			w := in.Body.window()
			rep, err := a.cfg.Reconciler.Source(ctx, src.ID, w)
			if err := a.runRefusal(ctx, src, rep, err); err != nil {
				return nil, err
			}
			action := "source.reconcile"
			if w.DryRun {
				action = "source.reconcile_dry_run"
			}
			a.record(ctx, c, audit.Target{Action: action, Resource: "source", ID: src.ID, TenantID: src.TenantID})
			return reply(reportOf(rep)), nil
		})
}

// runRefusal decides what a run's error answers: nil when the report is
// the answer (the run ended, short of its window's end or not: its outcome
// says so), or the problem.
func (a *API) runRefusal(ctx context.Context, src tenancy.Source, rep reconcile.Report, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, reconcile.ErrBusy):
		return huma.Error409Conflict(fmt.Sprintf("source %s is being reconciled now (by the schedule, or another request); "+
			"its run is in GET %s/sources/%s/reconcile: try again once it ended", src.ID, Prefix, src.ID))
	case errors.Is(err, reconcile.ErrWindow):
		return huma.Error422UnprocessableEntity(err.Error())
	case errors.Is(err, tenancy.ErrNoAPICredentials):
		return huma.Error422UnprocessableEntity(a.noAPI(src))
	case rep.RunID == 0:
		return err // it never began: problem decides (a source gone is 404)
	case rep.Outcome == reconcile.OutcomeBudget, rep.Outcome == reconcile.OutcomeIncomplete:
		return nil // the report says how far it came
	case rep.Outcome == reconcile.OutcomeFailed:
		a.log.WarnContext(ctx, "reconcile run by request failed", slog.Int64("run_id", rep.RunID), slog.String("source_id", src.ID), slog.Any("error", err))
		return huma.Error502BadGateway(fmt.Sprintf("reconcile run %d of source %s failed; its row in GET %s/sources/%s/reconcile says why",
			rep.RunID, src.ID, Prefix, src.ID))
	}
	return err
}

// noAPI says why a source without API credentials cannot be reconciled.
func (a *API) noAPI(src tenancy.Source) string {
	if p, ok := a.providers().Get(provider.Kind(src.Kind)); ok {
		if _, ok := p.(provider.Reconciler); !ok {
			return fmt.Sprintf("a %s source has no provider API to reconcile against", src.Kind)
		}
	}
	return fmt.Sprintf("source %s has no API credentials: reconciliation reads the %s API with them (sluice source set-api-credentials)", src.ID, src.Kind)
}

// runs lists the latest runs a token may see: of one source, of one
// tenant's sources (a scoped token: always its own), or of all.
func (a *API) runs(ctx context.Context, c Call, in runsQuery) ([]reconcile.Run, error) {
	tenant, err := c.TenantFilter(in.TenantID)
	if err != nil {
		return nil, err
	}
	if in.SourceID != "" {
		src, err := c.Store.Source(ctx, in.SourceID)
		switch {
		case err != nil:
			return nil, err
		case c.Token.Scoped() && src.TenantID != c.Token.TenantID:
			return nil, &tenancy.NotFoundError{Resource: "source", ID: in.SourceID}
		case tenant != "" && src.TenantID != tenant:
			return nil, nil
		}
		return reconcile.Runs(ctx, a.cfg.Pool, in.SourceID, in.Limit)
	}
	if tenant == "" {
		return reconcile.Runs(ctx, a.cfg.Pool, "", in.Limit)
	}
	if _, err := c.Store.Tenant(ctx, tenant); err != nil {
		return nil, err
	}
	// reconcile.Runs lists one source's or all: a tenant's are the latest
	// of each of its sources, merged.
	var runs []reconcile.Run
	page := tenancy.Page{Limit: tenancy.MaxPageSize}
	for {
		srcs, next, err := c.Store.Sources(ctx, tenancy.SourceFilter{TenantID: tenant}, page)
		if err != nil {
			return nil, err
		}
		for _, s := range srcs {
			rs, err := reconcile.Runs(ctx, a.cfg.Pool, s.ID, in.Limit)
			if err != nil {
				return nil, err
			}
			runs = append(runs, rs...)
		}
		if next == "" {
			break
		}
		page.After = next
	}
	slices.SortFunc(runs, func(x, y reconcile.Run) int { return cmp.Compare(y.ID, x.ID) })
	return runs[:min(len(runs), in.Limit)], nil
}

// extendWriteDeadline lets an operation's answer be written up to d after
// it began, past the listener's write timeout (30 s).
func extendWriteDeadline(d time.Duration) func(huma.Context, func(huma.Context)) {
	return func(hc huma.Context, next func(huma.Context)) {
		_ = http.NewResponseController(humagin.Unwrap(hc).Writer).SetWriteDeadline(time.Now().Add(d))
		next(hc)
	}
}
