package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluicehq/sluice/internal/ingest"
	"github.com/sluicehq/sluice/internal/ingest/reconcile"
	"github.com/sluicehq/sluice/internal/keyring"
	"github.com/sluicehq/sluice/internal/provider"
	"github.com/sluicehq/sluice/internal/provider/kinds"
	"github.com/sluicehq/sluice/internal/store/catalog"
	"github.com/sluicehq/sluice/internal/store/tenancy"
	"github.com/sluicehq/sluice/schemas"
)

// ReconcileCmd groups reconciliation: asking providers' APIs for what their
// webhooks never delivered.
type ReconcileCmd struct {
	Run    ReconcileRunCmd    `cmd:"" default:"withargs" help:"Reconcile a source, or every source with API credentials (the default subcommand)."`
	Status ReconcileStatusCmd `cmd:"" help:"Show recent reconciliation runs and what they corrected."`
}

// ReconcileRunCmd runs reconciliation once, or as a schedule.
type ReconcileRunCmd struct {
	Output
	ReconcileFlags `embed:""`
	Source         string        `help:"Source id; default: every enabled source with API credentials." input:"uuid"`
	Since          string        `help:"Start of a manual window (RFC 3339); default: where the source's automatic position stands."`
	Until          string        `help:"End of a manual window (RFC 3339); default: now. A time after now is cut at now. Without --since and --until a run reads the source's automatic window, resuming it where the last run stopped."`
	Every          time.Duration `help:"Run as a dedicated reconciler until stopped: each source every so often (as --reconcile-every, from its last scheduled run in Postgres), the first due ones at once; 0: one run."`
	DryRun         bool          `name:"dry-run" help:"Report what would be recovered or redelivered; enter, ask for and save nothing."`
}

func (c *ReconcileRunCmd) window() (provider.Window, error) {
	var w provider.Window
	for _, f := range []struct {
		flag, v string
		into    *time.Time
	}{{"--since", c.Since, &w.Since}, {"--until", c.Until, &w.Until}} {
		if f.v == "" {
			continue
		}
		t, err := time.Parse(time.RFC3339, f.v)
		if err != nil {
			return w, fmt.Errorf("%s: %w", f.flag, err)
		}
		*f.into = t
	}
	w.DryRun = c.DryRun
	return w, nil
}

// Validate refuses a window or a combination of flags that cannot run
// before anything connects (a usage error).
func (c *ReconcileRunCmd) Validate() error {
	w, err := c.window()
	if err != nil {
		return err
	}
	if c.Every > 0 && (c.Source != "" || c.DryRun || !w.Since.IsZero() || !w.Until.IsZero()) {
		return errors.New("--every runs every source's automatic window: it takes no --source, --since, --until or --dry-run")
	}
	return nil
}

func (c *ReconcileRunCmd) Run(ctx context.Context, g *Globals, log *slog.Logger) error {
	w, err := c.window()
	if err != nil {
		return err
	}
	cfg := c.ReconcileFlags
	if c.Every > 0 {
		cfg.ReconcileEvery = c.Every
	}
	rc, err := cfg.config()
	if err != nil {
		return err
	}
	runner, stop, err := newRunner(ctx, g, log, rc)
	if err != nil {
		return err
	}
	defer stop()
	if c.Every > 0 {
		return runner.Loop(ctx)
	}
	var reports []reconcile.Report
	if c.Source != "" {
		if err := reconcilable(ctx, g, c.Source); err != nil {
			return err
		}
		var rep reconcile.Report
		rep, err = runner.Source(ctx, c.Source, w)
		if errors.Is(err, reconcile.ErrBusy) {
			fmt.Fprintf(os.Stderr, "source %s is being reconciled by another instance now; nothing was done\n", c.Source)
			return err
		}
		reports = []reconcile.Report{rep}
	} else {
		reports, err = runner.All(ctx, w)
	}
	if perr := c.report(reports); perr != nil {
		return perr
	}
	return err
}

// reconcilable refuses, before a run is recorded, a source whose kind has
// no provider API to ask: the api source (what a tenant POSTs to
// /v1/events comes from the tenant itself) and kinds that only sign.
func reconcilable(ctx context.Context, g *Globals, sourceID string) error {
	s, done, err := g.store(ctx, false)
	if err != nil {
		return err
	}
	defer done()
	src, err := s.Source(ctx, sourceID)
	if err != nil {
		return err
	}
	registry := kinds.Builtin()
	var able []string
	for _, k := range registry.Kinds() {
		if p, _ := registry.Get(k); p != nil {
			if _, ok := p.(provider.Reconciler); ok {
				able = append(able, string(k))
			}
		}
	}
	if provider.Kind(src.Kind) == provider.KindAPI {
		return fmt.Errorf("source %s is tenant %s's api source: its events are POSTed to /v1/events by the tenant itself, "+
			"so there is no provider to ask for what never arrived; reconciliation asks a provider's API (sources of kind %s)",
			src.ID, src.TenantID, strings.Join(able, ", "))
	}
	if slices.Contains(able, src.Kind) {
		return nil
	}
	return fmt.Errorf("source %s is of kind %s, whose provider has no API to reconcile against (sources of kind %s have one)",
		src.ID, src.Kind, strings.Join(able, ", "))
}

// newRunner builds a runner whose recovered events go through an ingest
// service of this process: the same reading, catalogue checks (the
// tenants' own types too) and group commit as a webhook. stop ends both.
func newRunner(ctx context.Context, g *Globals, log *slog.Logger, rc reconcile.Config) (runner *reconcile.Runner, stop func(), err error) {
	set, err := g.effects()
	if err != nil {
		return nil, nil, err
	}
	rc.EffectGroups = set.RunningNames()
	pool, err := g.pool(ctx)
	if err != nil {
		return nil, nil, err
	}
	defer func() {
		if err != nil {
			pool.Close()
		}
	}()
	ring, err := keyring.Parse(g.SecretKey)
	if err != nil {
		return nil, nil, err
	}
	catalogue, err := schemas.Load()
	if err != nil {
		return nil, nil, err
	}
	registry := kinds.Builtin()
	cc := g.catalog()
	cc.Builtin, cc.Providers = catalogue, registry
	types, err := catalog.New(pool, cc)
	if err != nil {
		return nil, nil, err
	}
	reg := prometheus.NewRegistry()
	svc := ingest.New(ingest.Config{Topics: g.topics(), Providers: registry, TenantTypes: types}, log, pool, ring, catalogue, reg)
	// Its commits outlive the runs: they end with stop, once the command
	// is done with the runner.
	commits, stopCommits := context.WithCancel(context.WithoutCancel(ctx))
	committed := make(chan error, 1)
	go func() { committed <- svc.Run(commits) }()
	runner = reconcile.New(rc, log, tenancy.Store{Pool: pool, Ring: ring, Providers: registry}, registry, svc, reconcile.NewMetrics(reg))
	return runner, func() {
		stopCommits()
		<-committed
		pool.Close()
	}, nil
}

func (c *ReconcileRunCmd) report(reports []reconcile.Report) error {
	if c.Output.Output == "json" {
		out := make([]map[string]any, 0, len(reports))
		for _, r := range reports {
			out = append(out, map[string]any{"run_id": r.RunID, "source_id": r.SourceID, "kind": r.Kind, "since": r.Window.Since,
				"until": r.Window.Until, "dry_run": r.Window.DryRun, "automatic": r.Automatic, "resumed": r.Resumed,
				"clamped": r.Clamped, "outcome": r.Outcome, "missing_permission": r.Missing, "found": r.Found, "pages": r.Pages,
				"requests": r.Requests, "corrected": r.Corrected(), "corrections": r.Corrections})
		}
		return json.NewEncoder(os.Stdout).Encode(map[string]any{"items": out})
	}
	for _, r := range reports {
		if r.Clamped {
			fmt.Fprintf(os.Stderr, "source %s: --until is after now; the window ends now (%s)\n", r.SourceID, r.Window.Until.UTC().Format(time.RFC3339))
		}
		if r.Missing != "" {
			fmt.Fprintf(os.Stderr, "source %s: the provider refused a lookup for want of the %s permission of its API key; the run is partial\n", r.SourceID, r.Missing)
		}
	}
	t := newTable(os.Stdout, "RUN\tSOURCE\tKIND\tMODE\tOUTCOME\tSINCE\tUNTIL\tPAGES\tREQUESTS\tFOUND\tRECOVERED\tREDELIVERY_REQUESTED\tCONFLICT")
	for _, r := range reports {
		t.row(r.RunID, r.SourceID, r.Kind, mode(r.Window.DryRun, r.Automatic), r.Outcome, stamp(&r.Window.Since), stamp(&r.Window.Until),
			r.Pages, r.Requests, r.Found, r.Corrections[reconcile.OutcomeRecovered], r.Corrections[reconcile.OutcomeRedeliveryRequested],
			r.Corrections[reconcile.OutcomeConflict])
	}
	return t.flush()
}

// mode says whose window a run read, and whether it changed anything.
func mode(dryRun, automatic bool) string {
	m := "manual"
	if automatic {
		m = "scheduled"
	}
	if dryRun {
		m += ",dry-run"
	}
	return m
}

func stamp(t *time.Time) string {
	if t == nil || t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

// ReconcileStatusCmd shows where each source stands and its recent runs.
type ReconcileStatusCmd struct {
	Output
	Source string   `help:"Only this source." input:"uuid"`
	Limit  runLimit `default:"20" help:"How many runs, newest first, 1 to 200."`
}

func (c *ReconcileStatusCmd) Run(ctx context.Context, g *Globals) error {
	pool, err := g.pool(ctx)
	if err != nil {
		return err
	}
	defer pool.Close()
	sources, err := reconcile.Sources(ctx, pool, c.Source)
	if err != nil {
		return err
	}
	runs, err := reconcile.Runs(ctx, pool, c.Source, int(c.Limit))
	if err != nil {
		return err
	}
	if c.Output.Output == "json" {
		return json.NewEncoder(os.Stdout).Encode(map[string]any{"sources": sources, "runs": runs})
	}
	tw := newTable(os.Stdout, "SOURCE\tKIND\tCOVERED_UNTIL\tWINDOW\tPHASE\tREACHED\tWAITING\tMISSING_PERMISSION\tBUDGET_USED\tNEXT_REQUEST")
	for _, s := range sources {
		window, budget := "-", "-"
		if s.Since != nil {
			window = stamp(s.Since) + ".." + stamp(s.Until)
		}
		if s.Budget != nil {
			budget = fmt.Sprintf("%d/%d", s.Used, *s.Budget)
		}
		tw.row(s.SourceID, s.Kind, stamp(s.CoveredUntil), window, dash(s.Phase), stamp(s.Reached), s.Waiting, dash(s.Missing), budget,
			stamp(&s.NextRequest))
	}
	if err := tw.flush(); err != nil {
		return err
	}
	fmt.Println()
	tw = newTable(os.Stdout, "RUN\tSOURCE\tKIND\tMODE\tOUTCOME\tSINCE\tUNTIL\tSTARTED\tFINISHED\tPAGES\tREQUESTS\tFOUND\tCORRECTED\tDETAIL")
	for _, r := range runs {
		detail := r.Error
		if r.Missing != "" {
			detail = strings.TrimSpace("missing permission " + r.Missing + "; " + detail)
		}
		if r.Note != "" {
			detail = strings.TrimSpace(r.Note + "; " + detail)
		}
		tw.row(r.ID, r.SourceID, r.Kind, mode(r.DryRun, r.Automatic), r.Outcome, stamp(r.Since), stamp(r.Until), stamp(&r.StartedAt),
			stamp(r.FinishedAt), r.Pages, r.Requests, r.Found, r.Corrected, dash(strings.Trim(detail, "; ")))
	}
	return tw.flush()
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
