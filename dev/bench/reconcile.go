package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/sluicehq/sluice/internal/provider/kinds/stripe/stripetest"
	"github.com/sluicehq/sluice/internal/store/tenancy"
)

// reconcileWindow is how many events the stand-in Stripe account holds;
// one in ten is a paid invoice (a type the catalogue handles), the others
// of types it does not (stripetest.Outage).
func (b *bench) reconcileWindow() int { return pick(b.quick, 100_000, 1_000_000) }

// reconcile measures `sluice reconcile --source` over a window of an
// account with reconcileWindow events in its last 48 hours, a tenth of them
// paid invoices never delivered: how fast they enter (events/s of the run's
// wall clock), how many listing requests each costs (Stripe lists 100 to a
// page, so 0.01 is one request per page of handled events, which only
// filtering the listing by type reaches), and Sluice's CPU per event. The
// Stripe API is a stand-in in the bench process (stripetest), whose CPU is
// not Sluice's. The consumers do not run: this is the door, not the grants.
func (b *bench) reconcile(ctx context.Context) error {
	api := stripetest.Start()
	defer api.Close()
	n := b.reconcileWindow()
	src, err := b.reconcileSource(ctx, api.URL)
	if err != nil {
		return err
	}
	began := time.Now()
	// The 48 hours before a minute ago: inside a first run's 72 h lookback.
	evs, handled := stripetest.Outage(n, src.customers[0], time.Now().Add(-time.Minute-48*time.Hour), 48*time.Hour)
	api.Record(evs...)
	// The stand-in sorts and indexes its events on the first listing: done
	// here, so the run is not timed with the stand-in's start.
	if err := warmStandIn(ctx, api.URL); err != nil {
		return err
	}
	log.Printf("reconcile: stand-in Stripe API holds %d events (%d paid invoices), made in %s", n, handled, time.Since(began).Round(time.Millisecond))
	if err := b.quietPostgres(ctx, "reconcile"); err != nil {
		return err
	}

	args := []string{"reconcile", "run", "--source", src.sourceID, "-o", "json"}
	budget, err := b.reconcileBudget(ctx)
	if err != nil {
		return err
	}
	args = append(args, budget...)
	listed := api.Requests("/v1/events")
	log.Printf("reconcile: %s %s", b.bin, strings.Join(args, " "))
	logPath := filepath.Join(b.outDir, "sluice-reconcile.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer logFile.Close()
	cmd := exec.CommandContext(ctx, b.bin, args...)
	cmd.Env = append(os.Environ(), b.sluiceEnv(b.stageAddr, b.slot("unused"))...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, logFile
	before := b.cpu.sample()
	t := time.Now()
	runErr := cmd.Run()
	took := time.Since(t)
	after := b.cpu.sample()
	after["sluice"] = childCPU(cmd.ProcessState)
	requests := api.Requests("/v1/events") - listed
	if runErr != nil {
		return fmt.Errorf("sluice %v: %w (after %s, %d listing requests; output %q; see %s)", args, runErr, took.Round(time.Millisecond), requests, out.String(), logPath)
	}
	type reconcileRun struct {
		Found       int            `json:"found"`
		Corrections map[string]int `json:"corrections"`
		// Builds from before these printed them leave them zero.
		Outcome  string `json:"outcome"`
		Pages    int    `json:"pages"`
		Requests int    `json:"requests"`
	}
	var report struct {
		Items []reconcileRun `json:"items"`
		Runs  []reconcileRun `json:"runs"` // the shape of builds before items
	}
	if err := json.Unmarshal(out.Bytes(), &report); err != nil || len(report.Items)+len(report.Runs) != 1 {
		return fmt.Errorf("sluice reconcile -o json printed %q: want one run (%v)", out.String(), err)
	}
	run := slices.Concat(report.Items, report.Runs)[0]
	recovered := run.Corrections["recovered"]
	// What the step measures is only a figure if every paid invoice, and
	// nothing else, entered the inbox.
	var inbox int
	if err := b.pool.QueryRow(ctx, `SELECT count(*) FROM inbox WHERE source_id = $1`, src.sourceID).Scan(&inbox); err != nil {
		return err
	}
	if inbox != handled || recovered != handled {
		return fmt.Errorf("reconcile: the inbox holds %d events of the source and the run reports %d recovered (%d found, outcome %q), want %d each: the figures would not measure a full reconciliation",
			inbox, recovered, run.Found, run.Outcome, handled)
	}
	cpu := map[string][]float64{}
	b.cpu.perEvent("reconcile", before, after.only("sluice", "postgres"), float64(recovered), cpu)
	b.medians(cpu)
	b.results["reconcile_window_events"] = float64(n)
	b.results["reconcile_handled_events"] = float64(handled)
	b.results["reconcile_recovered"] = float64(recovered)
	b.results["reconcile_listing_requests"] = float64(requests)
	b.results["reconcile_seconds"] = took.Seconds()
	b.results["reconcile_recovered_per_s"] = float64(recovered) / took.Seconds()
	b.results["reconcile_listing_requests_per_handled"] = float64(requests) / float64(handled)
	b.results["reconcile_cpu_us_per_event"] = b.results["reconcile_sluice_cpu_us_per_event"]
	log.Printf("reconcile: %d of %d events recovered in %s: %.0f events/s, %d listing requests (%.4f per handled event), sluice %.1f us and postgres %.1f us of CPU per event",
		recovered, n, took.Round(time.Millisecond), b.results["reconcile_recovered_per_s"], requests, b.results["reconcile_listing_requests_per_handled"],
		b.results["reconcile_sluice_cpu_us_per_event"], b.results["reconcile_postgres_cpu_us_per_event"])
	if run.Pages > 0 {
		log.Printf("reconcile: the run reports outcome %s, %d found, %d pages, %d requests", run.Outcome, run.Found, run.Pages, run.Requests)
	}
	return nil
}

// reconcileSource makes the step's tenant, its Stripe source with API
// credentials for the stand-in at apiBase, and a workspace for the
// customer its invoices are paid by. It is not one of b.sources: the
// generator of other steps does not send to it.
func (b *bench) reconcileSource(ctx context.Context, apiBase string) (benchSource, error) {
	s := benchSource{account: "acct_bench_reconcile", secret: "whsec_bench_" + b.run + "_reconcile", customers: []string{"cus_bench_reconcile"}}
	var err error
	if s.tenantID, err = b.store.CreateTenant(ctx, "bench-reconcile"); err != nil {
		return s, err
	}
	if s.sourceID, err = b.store.CreateSource(ctx, tenancy.NewSource{TenantID: s.tenantID, Kind: "stripe", Account: s.account, Secret: s.secret}); err != nil {
		return s, err
	}
	if _, err := b.store.CreateWorkspace(ctx, s.tenantID, s.customers[0], ""); err != nil {
		return s, err
	}
	creds, _ := json.Marshal(map[string]string{"secret_key": "rk_test_bench", "api_base": apiBase})
	if err := b.store.SetAPICredentials(ctx, s.sourceID, creds); err != nil {
		return s, err
	}
	return s, nil
}

// warmStandIn asks the stand-in for one event, as Stripe would be asked.
func warmStandIn(ctx context.Context, base string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/v1/events?limit=1", nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer rk_test_bench")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("stand-in Stripe API: %w", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("stand-in Stripe API answered %d", resp.StatusCode)
	}
	return nil
}

// reconcileBudget lifts the source's hourly API budget for the run, on a
// build whose reconcile takes one (--reconcile-budget, or --budget);
// without it, the default budget applies (and a window needing more
// requests fails the step).
func (b *bench) reconcileBudget(ctx context.Context) ([]string, error) {
	help, err := exec.CommandContext(ctx, b.bin, "reconcile", "run", "--help").CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("sluice reconcile run --help: %w: %s", err, help)
	}
	for _, flag := range []string{"--reconcile-budget", "--budget"} {
		if bytes.Contains(help, []byte(flag+"=")) {
			return []string{flag, "1000000"}, nil
		}
	}
	b.note("reconcile: this build's `sluice reconcile` takes no budget flag: the run had the default hourly budget of API requests")
	return nil, nil
}
