package delivery

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// An endpoint's low-water mark (delivery_marks, migration 00038) is where
// its next owner starts reading: every delivery of the endpoint below it is
// settled, but for its exceptions (deliveries the owner held there, by id,
// and keys whose unread rest starts below it) and the ranges of retries
// and replays (delivery_redos). A delivery has no queue row: the owner
// reads deliveries from the mark in id order, then what the fan-out
// announces.
//
// The owner moves the mark in two steps a poll apart. It proposes the
// lowest id it may not pass yet (nothing held there that is not parked,
// nothing above what its reads reached) with the snapshot of a statement
// sent after that; the next statement, once every transaction running at
// that snapshot has ended (a fan-out still running then may hold lower
// ids, invisible until it commits), checks the range in that light and
// stops the mark at the first pending delivery the exceptions do not name.
// A key whose lowest held delivery waited longer than parkAfter (a failing
// head and the deliveries behind it) is parked: named in the exceptions,
// so the mark moves on past it instead of waiting for it up to the retry
// horizon, and a takeover reads it back by id and key rather than scanning
// every delivery since.

// mark is the endpoint's mark as its owner last read or wrote it.
type mark struct {
	low, version int64
}

// proposal is a mark the owner would move to, and the snapshot of a
// statement sent after the reads it rests on (nil: none yet).
type proposal struct {
	c    int64
	snap *string
}

// markRow is an endpoint's row of delivery_marks.
type markRow struct {
	mark
	ids  []int64
	keys []string
	from []int64
}

// readMark reads endpoint's mark; an endpoint with none reads from its
// first delivery.
func (d *Deliverer) readMark(ctx context.Context, endpoint string) (markRow, error) {
	var r markRow
	err := d.pool.QueryRow(ctx, markReadSQL, endpoint).Scan(&r.low, &r.ids, &r.keys, &r.from, &r.version)
	if errors.Is(err, pgx.ErrNoRows) {
		return markRow{}, nil
	}
	if err != nil {
		return markRow{}, fmt.Errorf("read the endpoint's mark: %w", err)
	}
	return r, nil
}

// moved is what a statement moving the mark did.
type moved struct {
	ripe bool
	// written is the mark written, if any.
	written *mark
	// read is the version the statement found: another than the owner's
	// means a write it did not make.
	read int64
	snap string
	// hold are pending deliveries the check found that the owner may not
	// hold (a late commit, an outcome whose write failed).
	hold []int64
}

// moveMark checks proposal p against m and writes the mark it allows, with
// the exceptions the owner names below p.c (ids; keys from their from).
func (d *Deliverer) moveMark(ctx context.Context, endpoint string, m mark, p proposal, ex exceptions) (moved, error) {
	var (
		r       moved
		low, vs *int64
	)
	err := d.pool.QueryRow(ctx, markSQL, endpoint, m.low, m.version, p.snap, p.c, ex.ids, ex.keys, ex.from, held).
		Scan(&r.ripe, &low, &vs, &r.read, &r.snap, &r.hold)
	if err != nil {
		return moved{}, fmt.Errorf("move the endpoint's mark: %w", err)
	}
	if low != nil && vs != nil {
		r.written = &mark{low: *low, version: *vs}
	}
	return r, nil
}

// exceptions are what the owner holds below a proposed mark.
type exceptions struct {
	ids  []int64
	keys []string
	from []int64
}

// parkAfter is how long a key's lowest delivery waits in the owner's
// memory before the key is parked: six polls (30 s by default).
func (d *Deliverer) parkAfter() time.Duration { return 6 * d.cfg.Poll }

// takeover reads where the endpoint stands: its mark, and below it the
// deliveries still pending that the mark names, that retries and replays
// moved back, or that a release before queued. Reading goes on from the
// mark. An owner that may have missed announcements reads it again too;
// what it holds stays.
func (l *loop) takeover() error {
	id := l.target.Load().ID
	row, err := l.d.readMark(l.ctx, id)
	if err != nil {
		return err
	}
	l.mark, l.prop = row.mark, proposal{}
	l.scanned, l.scanEnd = row.low-1, false
	since := time.Now()
	msgs, err := l.d.heldAmong(l.ctx, id, row.ids, row.low)
	if err != nil {
		return err
	}
	l.hold(msgs, since)
	for i, k := range row.keys {
		if after, ok := l.refills[k]; !ok || row.from[i]-1 < after {
			l.refills[k] = row.from[i] - 1
		}
	}
	return l.redo()
}

// redo holds the deliveries retries and replays moved back to pending.
func (l *loop) redo() error {
	since := time.Now()
	msgs, err := l.d.redone(l.ctx, l.target.Load().ID, held)
	if err != nil {
		return err
	}
	l.hold(msgs, since)
	return nil
}

// advance checks the pending proposal and proposes the next: each poll
// moves the mark up to where the previous one proposed.
func (l *loop) advance(now time.Time) error {
	c := min(l.scanned+1, l.q.lowestOpen(now.Add(-l.d.parkAfter())))
	p := l.prop
	if p.snap == nil {
		if c <= l.mark.low {
			return nil
		}
		p.c = l.mark.low // nothing to check: the statement only gives its snapshot
	}
	since := time.Now()
	ids, keys, from := l.q.parkedBelow(p.c)
	r, err := l.d.moveMark(l.ctx, l.target.Load().ID, l.mark, p, exceptions{ids: ids, keys: keys, from: from})
	if err != nil {
		return err
	}
	if r.read != l.mark.version {
		// Written by someone else (an owner before, finishing): read it.
		l.lost = true
		return nil
	}
	if r.ripe && r.written != nil {
		l.mark = *r.written
	}
	if l.d.cfg.Signals != nil && p.snap != nil {
		l.d.cfg.Signals.Checked.Signal(MarkCheck{EndpointID: l.target.Load().ID, Proposed: p.c, Ripe: r.ripe, Low: l.mark.low})
	}
	if !r.ripe {
		return nil // a transaction of then still runs: check again next poll
	}
	l.prop = proposal{}
	if c > l.mark.low {
		l.prop = proposal{c: c, snap: &r.snap}
	}
	if len(r.hold) == 0 {
		return nil
	}
	msgs, err := l.d.heldAmong(l.ctx, l.target.Load().ID, r.hold, 0)
	if err != nil {
		return err
	}
	l.hold(msgs, since)
	return nil
}

// pruneMinutes removes endpoint's figures older than the console reads.
func (d *Deliverer) pruneMinutes(ctx context.Context, endpoint string) error {
	if _, err := d.pool.Exec(ctx, minutesPruneSQL, endpoint); err != nil {
		return fmt.Errorf("remove old figures: %w", err)
	}
	return nil
}
