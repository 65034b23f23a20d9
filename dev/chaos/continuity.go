package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kadm"
)

// continuity watches, while the upgrade runs, what must never go back:
// the relay's slot (it exists all along, and its confirmed position only
// moves forward: no relay of either release recreated it or confirmed
// less) and each consumer group's committed offsets (no partition's
// commit moves back: no group of either release rewound). Every look is
// counted; a step back is a violation.
type continuity struct {
	cancel context.CancelFunc
	done   chan struct{}
	slot   int
	groups int
}

func (c *chaos) watchContinuity(ctx context.Context) *continuity {
	ctx, cancel := context.WithCancel(ctx)
	w := &continuity{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(w.done)
		var confirmed pglogrepl.LSN
		offsets := map[string]int64{} // group/topic/partition -> committed offset
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			if err := c.checkSlot(ctx, &confirmed); err == nil {
				w.slot++
			} else if ctx.Err() == nil {
				c.violate("slot: %v", err)
			}
			if c.checkOffsets(ctx, offsets) == nil {
				w.groups++
			}
		}
	}()
	return w
}

// stop ends the watch and says how many looks it took at the slot and at
// the groups.
func (w *continuity) stop() (slot, groups int) {
	w.cancel()
	<-w.done
	return w.slot, w.groups
}

func (c *chaos) checkSlot(ctx context.Context, confirmed *pglogrepl.LSN) error {
	var lsn string
	err := c.pool.QueryRow(ctx, `SELECT confirmed_flush_lsn::text FROM pg_replication_slots WHERE slot_name = 'chaos'`).Scan(&lsn)
	if errors.Is(err, pgx.ErrNoRows) {
		return errors.New("the slot chaos is gone")
	}
	if err != nil {
		return err
	}
	now, err := pglogrepl.ParseLSN(lsn)
	if err != nil {
		return err
	}
	if now < *confirmed {
		return fmt.Errorf("its confirmed position went back from %s to %s", *confirmed, now)
	}
	*confirmed = now
	return nil
}

// checkOffsets compares each group's commits with the last seen; a failed
// look (a coordinator moving) is not a violation, only not counted.
func (c *chaos) checkOffsets(ctx context.Context, last map[string]int64) error {
	for _, g := range c.groups {
		committed, err := c.adm.FetchOffsets(ctx, g)
		if err != nil {
			return err
		}
		committed.Each(func(o kadm.OffsetResponse) {
			if o.Err != nil {
				return
			}
			key := fmt.Sprintf("%s/%s/%d", g, o.Topic, o.Partition)
			if prev, seen := last[key]; seen && o.At < prev {
				c.violate("consumer group %s: the commit of %s/%d went back from %d to %d", g, o.Topic, o.Partition, prev, o.At)
			}
			last[key] = max(last[key], o.At)
		})
	}
	return nil
}
