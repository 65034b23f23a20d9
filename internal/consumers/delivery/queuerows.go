package delivery

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
)

// A deliverer of the release before this one finds deliveries through
// queue rows (pending_deliveries) only, which this release's writers add,
// and its outcomes delete, only while delivery_queue_rows.written is true
// (migration 00038 says how both releases coexist). Every deliverer of this
// release keeps it: true while a deliverer without the marks' presence
// lock runs, false once none has been seen for quietRefreshes refreshes.
// Turning it true again (a rollback, an old process restarted) also writes
// a queue row for every pending delivery, twice a refresh apart: a fan-out
// that read false just before the change commits rows without one.

// queueRows is what a deliverer keeps of it between refreshes.
type queueRows struct {
	quiet     int // refreshes in a row without an older deliverer
	backfills int // queue-row writes still to make
}

// quietRefreshes is how many refreshes without an older deliverer turn
// queue rows off (about 15 s): a restarting process is not taken for gone.
const quietRefreshes = 3

// tendQueueRows turns queue rows on or off after a refresh that counted
// old deliverers of the release before.
func (d *Deliverer) tendQueueRows(ctx context.Context, old int) error {
	if old > 0 {
		d.qr.quiet = 0
		changed, err := d.setQueueRows(ctx, true)
		if err != nil {
			return err
		}
		if changed {
			d.qr.backfills = 2
			d.log.Warn("a deliverer of the release before runs: queue rows are written again",
				slog.String("event", "delivery.queue_rows"), slog.Bool("written", true), slog.Int("old_deliverers", old))
		}
	} else if d.qr.quiet++; d.qr.quiet >= quietRefreshes {
		changed, err := d.setQueueRows(ctx, false)
		if err != nil {
			return err
		}
		if changed {
			d.log.Info("no deliverer of the release before runs: queue rows are no longer written",
				slog.String("event", "delivery.queue_rows"), slog.Bool("written", false))
		}
	}
	if d.qr.backfills == 0 {
		return nil
	}
	if _, err := d.pool.Exec(ctx, queueBackfillSQL); err != nil {
		return fmt.Errorf("write queue rows: %w", err)
	}
	d.qr.backfills--
	return nil
}

// lastOfRelease says whether this deliverer is the only one of this
// release running (those of the release before aside).
// Counted on the pool, leaving out the sessions this deliverer's owner
// connections had: a closed one may hold its locks a moment longer, and a
// context ended in the middle of a refresh lets the owner go first.
func (d *Deliverer) lastOfRelease(ctx context.Context) bool {
	if len(d.ownPIDs) == 0 {
		return false // it never announced itself
	}
	n, old, err := countDeliverers(ctx, d.pool, d.cfg.Name, d.ownPIDs)
	return err == nil && n-old == 0
}

// handOver readies the pending deliveries for whichever deliverer comes
// next, when this one stops and no other deliverer of this release runs.
// The next may be of the release before: a rollback replaces the
// deliverers first, and one of the release before finds its work only
// through queue rows, which no process of this release would be left to
// write. So the last one turns queue rows on and writes one for every
// pending delivery, then again once every transaction that was running
// when it turned them on has ended (a fan-out that read them off commits
// deliveries without one). A deliverer of this release that comes next
// turns them off again after quietRefreshes. A process killed rather than
// stopped hands nothing over: its successor of this release would, if it
// saw one of the release before.
func (d *Deliverer) handOver(ctx context.Context) error {
	var snapshot string
	if err := d.pool.QueryRow(ctx, queueHandOverSQL).Scan(&snapshot); err != nil {
		return fmt.Errorf("turn queue rows on: %w", err)
	}
	if _, err := d.pool.Exec(ctx, queueBackfillSQL); err != nil {
		return fmt.Errorf("write queue rows: %w", err)
	}
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for {
		var ended bool
		if err := d.pool.QueryRow(ctx, snapshotEndedSQL, snapshot).Scan(&ended); err != nil {
			return fmt.Errorf("wait for the fan-outs running: %w", err)
		}
		if ended {
			break
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for the fan-outs running: %w", ctx.Err())
		case <-t.C:
		}
	}
	if _, err := d.pool.Exec(ctx, queueBackfillSQL); err != nil {
		return fmt.Errorf("write queue rows: %w", err)
	}
	d.log.Info("the last deliverer of this release stops: a queue row for every pending delivery",
		slog.String("event", "delivery.queue_rows"), slog.Bool("written", true))
	return nil
}

// setQueueRows sets whether queue rows are written, and says whether that
// changed it.
func (d *Deliverer) setQueueRows(ctx context.Context, written bool) (bool, error) {
	var now bool
	err := d.pool.QueryRow(ctx, queueRowsSQL, written).Scan(&now)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("set whether queue rows are written: %w", err)
	}
	return true, nil
}
