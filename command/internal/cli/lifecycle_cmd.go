package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"

	"github.com/sluicehq/sluice/internal/store/lifecycle"
)

// LifecycleCmd makes one pass of the lifecycle manager that `serve` and
// `ingest` run in the background: partitions ahead, aged ones dropped,
// expired keys and what else is past its horizon deleted. For an upgrade
// (partitions exist before the new binaries run) and for operators who
// want to see what it does.
type LifecycleCmd struct {
	Output
	Horizons `embed:""`
}

func (c *LifecycleCmd) Run(ctx context.Context, g *Globals, log *slog.Logger) error {
	cfg, err := c.lifecycle()
	if err != nil {
		return err
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	// Partitions need the owner (docs/managed-services.md).
	pool, err := g.ownerPool(ctx)
	if err != nil {
		return err
	}
	defer pool.Close()
	r, err := lifecycle.New(cfg, pool, log, nil).Pass(ctx)
	if err != nil {
		return err
	}
	if r.Skipped {
		return errors.New("another instance is making a pass now (it holds the lifecycle lock)")
	}
	if c.Output.Output == "json" {
		return json.NewEncoder(os.Stdout).Encode(map[string]any{"partitions_created": r.Created, "partitions_dropped": r.Dropped,
			"keys_deleted": r.KeysDeleted, "dead_letters_deleted": r.DeadLettersDeleted, "parked_deleted": r.ParkedDeleted,
			"reconcile_runs_deleted": r.ReconcileRunsDeleted, "corrections_deleted": r.CorrectionsDeleted, "links_deleted": r.LinksDeleted,
			"replaced_tables_dropped": r.LegacyDropped, "took_seconds": r.Took.Seconds()})
	}
	_, err = fmt.Printf("partitions created %d, dropped %d; keys deleted %d; replayed dead letters deleted %d; released parked records deleted %d; "+
		"reconcile runs deleted %d (corrections %d); object links deleted %d; replaced tables dropped %v; %s\n",
		r.Created, r.Dropped, r.KeysDeleted, r.DeadLettersDeleted, r.ParkedDeleted, r.ReconcileRunsDeleted, r.CorrectionsDeleted,
		r.LinksDeleted, r.LegacyDropped, r.Took)
	return err
}
