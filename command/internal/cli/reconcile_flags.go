package cli

import (
	"time"

	"github.com/sluicehq/sluice/internal/ingest/reconcile"
)

// ReconcileFlags tune reconciliation, wherever it runs: the schedule inside
// serve and ingest, and `sluice reconcile`.
type ReconcileFlags struct {
	ReconcileEvery      time.Duration `name:"reconcile-every" env:"SLUICE_RECONCILE_EVERY" default:"15m" help:"How often each source is reconciled, counted from its last scheduled run as stored in Postgres (restarts do not reset it)."`
	ReconcileJitter     time.Duration `name:"reconcile-jitter" env:"SLUICE_RECONCILE_JITTER" default:"0s" help:"Most a due run is delayed at random, so instances restarted together do not call a provider at once; 0: a tenth of --reconcile-every, at most 30s."`
	ReconcileBudget     int           `name:"reconcile-budget" env:"SLUICE_RECONCILE_BUDGET" default:"1000" help:"Requests per clock hour one source's provider API may be sent, by every instance together (429s waited out are not counted); a larger window is read over several hours."`
	ReconcileRunTimeout time.Duration `name:"reconcile-run-timeout" env:"SLUICE_RECONCILE_RUN_TIMEOUT" default:"30m" help:"Longest one run of one source may take, waits for a throttling provider included; the next run resumes where it stopped."`
	ReconcileLookback   time.Duration `name:"reconcile-lookback" env:"SLUICE_RECONCILE_LOOKBACK" default:"72h" help:"How far back a source's first scheduled run reaches."`
}

func (f ReconcileFlags) config() (reconcile.Config, error) {
	cfg := reconcile.Config{Every: f.ReconcileEvery, Jitter: f.ReconcileJitter, Budget: f.ReconcileBudget,
		RunTimeout: f.ReconcileRunTimeout, Lookback: f.ReconcileLookback}.WithDefaults()
	return cfg, cfg.Validate()
}
