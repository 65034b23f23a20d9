package reconcile

import (
	"context"
	"log/slog"
	"time"

	"github.com/sluicehq/sluice/ingest/provider"
)

// Loop reconciles every source with API credentials every cfg.Every, each
// run resuming from the source's watermark, until ctx ends. Instances may
// all loop: a source's lock lets one at a time reconcile it, the others
// skip it. The first round waits one interval, so a restarting process does
// not call providers' APIs at once.
func (r *Runner) Loop(ctx context.Context) error {
	t := time.NewTicker(r.cfg.Every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		reports, err := r.All(ctx, provider.Window{})
		if err != nil && ctx.Err() == nil {
			r.log.Warn("reconcile round failed", slog.Int("sources", len(reports)), slog.Any("error", err))
		}
	}
}
