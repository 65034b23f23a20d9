// Package offsets reads and moves the committed Kafka offsets of Sluice's
// consumer groups: lag per group and partition, and rewinds the way
// kafka-consumer-groups --reset-offsets does them. A rewind is refused
// unless the group has no member (state Empty or Dead): offsets moved under
// running members would be overwritten by their next commit.
package offsets

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/sluicehq/sluice/internal/kafka"
	"github.com/sluicehq/sluice/internal/refusal"
)

// ErrGroupActive: a rewind was asked of a group with members.
var ErrGroupActive = refusal.Sub(refusal.Conflict, "group_active", "the group has active members: stop its consumers first")

// Target is where a rewind moves every partition: exactly one of Earliest,
// Latest, a non-zero Time, or Offset >= 0.
type Target struct {
	Earliest, Latest bool
	// Time moves to the first record at or after it; a partition with
	// nothing that late moves to its end.
	Time time.Time
	// Offset is kept within each partition's start and end.
	Offset int64
}

// Move is one partition's rewind.
type Move struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Current   int64  `json:"current"` // -1: never committed
	New       int64  `json:"new"`
}

// Rewind computes, and with execute commits, new offsets of group for every
// partition of topics (the group's). It refuses with ErrGroupActive unless
// the group is Empty or Dead.
func Rewind(ctx context.Context, adm *kadm.Client, group string, topics []string, target Target, execute bool) ([]Move, error) {
	if err := requireInactive(ctx, adm, group); err != nil {
		return nil, err
	}
	b, err := readBounds(ctx, adm, group, topics, target.Time)
	if err != nil {
		return nil, err
	}
	moves, next := b.moves(target)
	if !execute {
		return moves, nil
	}
	// The broker refuses commits from outside a group with members, so a
	// consumer that joined since the check makes this fail, not race.
	if err := adm.CommitAllOffsets(ctx, group, next); err != nil {
		return nil, fmt.Errorf("commit offsets of %s: %w", group, err)
	}
	return moves, nil
}

func requireInactive(ctx context.Context, adm *kadm.Client, group string) error {
	described, err := adm.DescribeGroups(ctx, group)
	if err != nil {
		return fmt.Errorf("describe group %s: %w", group, err)
	}
	d := described[group]
	if kafka.Classify(d.Err) == kafka.FaultGroupMissing {
		// Kafka 4's coordinator says so of a group that never ran (older
		// brokers call it Dead): it has no member to disturb.
		return nil
	}
	if d.Err != nil {
		return fmt.Errorf("describe group %s: %w", group, d.Err)
	}
	if d.State != "Empty" && d.State != "Dead" {
		return fmt.Errorf("group %s is %s with %d member(s): %w", group, d.State, len(d.Members), ErrGroupActive)
	}
	return nil
}

// bounds are what a rewind decides from: each partition's log start and
// end, the offsets at a time (when asked), and the group's commits.
type bounds struct {
	starts, ends, atTime kadm.ListedOffsets
	committed            kadm.OffsetResponses
}

func readBounds(ctx context.Context, adm *kadm.Client, group string, topics []string, at time.Time) (bounds, error) {
	var b bounds
	var err error
	if b.starts, err = listed(adm.ListStartOffsets(ctx, topics...)); err != nil {
		return b, fmt.Errorf("start offsets: %w", err)
	}
	if b.ends, err = listed(adm.ListEndOffsets(ctx, topics...)); err != nil {
		return b, fmt.Errorf("end offsets: %w", err)
	}
	if !at.IsZero() {
		if b.atTime, err = listed(adm.ListOffsetsAfterMilli(ctx, at.UnixMilli(), topics...)); err != nil {
			return b, fmt.Errorf("offsets at %s: %w", at.Format(time.RFC3339), err)
		}
	}
	if b.committed, err = adm.FetchOffsets(ctx, group); err != nil {
		return b, fmt.Errorf("committed offsets of %s: %w", group, err)
	}
	return b, nil
}

func listed(o kadm.ListedOffsets, err error) (kadm.ListedOffsets, error) {
	if err == nil {
		err = o.Error()
	}
	return o, err
}

// moves returns each partition's move, sorted, and the offsets to commit.
func (b bounds) moves(target Target) ([]Move, kadm.Offsets) {
	var moves []Move
	next := kadm.Offsets{}
	b.starts.Each(func(start kadm.ListedOffset) {
		m := Move{Topic: start.Topic, Partition: start.Partition, Current: -1, New: b.newOffset(start, target)}
		if c, ok := b.committed.Lookup(start.Topic, start.Partition); ok {
			m.Current = c.At
		}
		moves = append(moves, m)
		next.AddOffset(m.Topic, m.Partition, m.New, -1)
	})
	slices.SortFunc(moves, func(a, b Move) int {
		if c := strings.Compare(a.Topic, b.Topic); c != 0 {
			return c
		}
		return int(a.Partition - b.Partition)
	})
	return moves, next
}

func (b bounds) newOffset(start kadm.ListedOffset, target Target) int64 {
	end, _ := b.ends.Lookup(start.Topic, start.Partition)
	switch {
	case target.Earliest:
		return start.Offset
	case target.Latest:
		return end.Offset
	case !target.Time.IsZero():
		o, _ := b.atTime.Lookup(start.Topic, start.Partition)
		return o.Offset
	default:
		return min(max(target.Offset, start.Offset), end.Offset)
	}
}

// LagRow is one partition of one group: Committed is -1 when the group
// never committed there.
type LagRow struct {
	Group     string `json:"group"`
	State     string `json:"state"`
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Committed int64  `json:"committed"`
	Start     int64  `json:"start"`
	End       int64  `json:"end"`
	Lag       int64  `json:"lag"`
	Member    string `json:"member,omitempty"`
}

// Lag reads committed, log start and end offsets of the groups (kadm's Lag,
// which counts from the log start when segments were deleted). A group that
// never ran is one row with state "never ran".
func Lag(ctx context.Context, adm *kadm.Client, groups ...string) ([]LagRow, error) {
	lags, err := adm.Lag(ctx, groups...)
	if err != nil {
		return nil, fmt.Errorf("lag: %w", err)
	}
	var rows []LagRow
	for _, l := range lags.Sorted() {
		if err := l.Error(); kafka.Classify(err) == kafka.FaultGroupMissing {
			rows = append(rows, LagRow{Group: l.Group, State: "never ran", Committed: -1, Lag: -1})
			continue
		} else if err != nil {
			return nil, fmt.Errorf("lag of %s: %w", l.Group, err)
		}
		for _, m := range l.Lag.Sorted() {
			r := LagRow{Group: l.Group, State: l.State, Topic: m.Topic, Partition: m.Partition,
				Committed: m.Commit.At, Start: m.Start.Offset, End: m.End.Offset, Lag: m.Lag}
			if m.Member != nil {
				r.Member = m.Member.ClientID + "/" + m.Member.ClientHost
			}
			rows = append(rows, r)
		}
	}
	return rows, nil
}
