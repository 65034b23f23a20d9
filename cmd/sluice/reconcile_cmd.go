package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"text/tabwriter"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluicehq/sluice/ingest"
	"github.com/sluicehq/sluice/ingest/provider"
	"github.com/sluicehq/sluice/ingest/providers"
	"github.com/sluicehq/sluice/ingest/reconcile"
	"github.com/sluicehq/sluice/internal/keyring"
	"github.com/sluicehq/sluice/internal/tenancy"
	"github.com/sluicehq/sluice/schemas"
)

// ReconcileCmd groups reconciliation: asking providers' APIs for what their
// webhooks never delivered.
type ReconcileCmd struct {
	Run    ReconcileRunCmd    `cmd:"" default:"withargs" help:"Reconcile a source, or every source with API credentials (the default subcommand)."`
	Status ReconcileStatusCmd `cmd:"" help:"Show recent reconciliation runs and what they corrected."`
}

// ReconcileRunCmd runs reconciliation once, or every --every.
type ReconcileRunCmd struct {
	Output
	Source string        `help:"Source id; default: every enabled source with API credentials."`
	Since  string        `help:"Start of the window (RFC 3339); default: where the source's last run ended (its first run: 72h back)."`
	Until  string        `help:"End of the window (RFC 3339); default: now."`
	Every  time.Duration `help:"Run again every so often until stopped (a dedicated reconciler); 0: once."`
	DryRun bool          `name:"dry-run" help:"Report what would be recovered or redelivered; enter and ask for nothing."`
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

func (c *ReconcileRunCmd) Run(ctx context.Context, g *Globals, log *slog.Logger) error {
	w, err := c.window()
	if err != nil {
		return err
	}
	pool, err := g.pool(ctx)
	if err != nil {
		return err
	}
	defer pool.Close()
	ring, err := keyring.Parse(g.SecretKey)
	if err != nil {
		return err
	}
	catalogue, err := schemas.Load()
	if err != nil {
		return err
	}
	// Recovered events go through an ingest service of this process: the
	// same reading, catalogue checks and group commit as a webhook.
	reg := prometheus.NewRegistry()
	registry := providers.Builtin()
	svc := ingest.New(ingest.Config{Topics: g.topics(), Providers: registry}, log, pool, ring, catalogue, reg)
	svc.Start()
	defer svc.Stop()
	runner := reconcile.New(reconcile.Config{}, log, tenancy.Store{Pool: pool, Ring: ring, Providers: registry}, registry, svc, reconcile.NewMetrics(reg))
	for {
		if err := c.once(ctx, runner, w); err != nil && c.Every == 0 {
			return err
		}
		if c.Every == 0 {
			return nil
		}
		// Later rounds resume from each source's watermark.
		w.Since, w.Until = time.Time{}, time.Time{} // keeps DryRun
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(c.Every):
		}
	}
}

func (c *ReconcileRunCmd) once(ctx context.Context, runner *reconcile.Runner, w provider.Window) error {
	var (
		reports []reconcile.Report
		err     error
	)
	if c.Source != "" {
		var rep reconcile.Report
		rep, err = runner.Source(ctx, c.Source, w)
		if errors.Is(err, reconcile.ErrBusy) {
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

func (c *ReconcileRunCmd) report(reports []reconcile.Report) error {
	if c.Output.Output == "json" {
		out := make([]map[string]any, 0, len(reports))
		for _, r := range reports {
			out = append(out, map[string]any{"run_id": r.RunID, "source_id": r.SourceID, "kind": r.Kind, "since": r.Window.Since,
				"until": r.Window.Until, "found": r.Found, "corrected": r.Corrected(), "corrections": r.Corrections})
		}
		return json.NewEncoder(os.Stdout).Encode(map[string]any{"runs": out})
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tSOURCE\tKIND\tSINCE\tUNTIL\tFOUND\tRECOVERED\tREDELIVERY_REQUESTED\tCONFLICT")
	for _, r := range reports {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%d\n", r.RunID, r.SourceID, r.Kind, r.Window.Since.UTC().Format(time.RFC3339),
			r.Window.Until.UTC().Format(time.RFC3339), r.Found, r.Corrections[reconcile.OutcomeRecovered],
			r.Corrections[reconcile.OutcomeRedeliveryRequested], r.Corrections[reconcile.OutcomeConflict])
	}
	return tw.Flush()
}

// ReconcileStatusCmd lists recorded runs.
type ReconcileStatusCmd struct {
	Output
	Source string `help:"Only this source's runs."`
	Limit  int    `default:"20" help:"How many runs, newest first."`
}

func (c *ReconcileStatusCmd) Run(ctx context.Context, g *Globals) error {
	pool, err := g.pool(ctx)
	if err != nil {
		return err
	}
	defer pool.Close()
	runs, err := reconcile.Runs(ctx, pool, c.Source, c.Limit)
	if err != nil {
		return err
	}
	if c.Output.Output == "json" {
		return json.NewEncoder(os.Stdout).Encode(map[string]any{"runs": runs})
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tSOURCE\tKIND\tSINCE\tUNTIL\tSTARTED\tFINISHED\tFOUND\tCORRECTED\tERROR")
	for _, r := range runs {
		finished := "running"
		if r.FinishedAt != nil {
			finished = r.FinishedAt.UTC().Format(time.RFC3339)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%s\n", r.ID, r.SourceID, r.Kind, r.Since.UTC().Format(time.RFC3339),
			r.Until.UTC().Format(time.RFC3339), r.StartedAt.UTC().Format(time.RFC3339), finished, r.Found, r.Corrected, r.Error)
	}
	return tw.Flush()
}
