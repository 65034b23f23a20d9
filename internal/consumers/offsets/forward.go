package offsets

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kadm"
)

// Ends reads where every partition of topics ends now, as a read-committed
// consumer sees it (the last stable offset): the offsets a group that had
// read everything produced so far would commit.
func Ends(ctx context.Context, adm *kadm.Client, topics ...string) (kadm.Offsets, error) {
	ends, err := listed(adm.ListCommittedOffsets(ctx, topics...))
	if err != nil {
		return nil, fmt.Errorf("end offsets: %w", err)
	}
	return ends.Offsets(), nil
}

// ForwardTo commits group's offsets up to to wherever the group's commit is
// behind it or absent, and never moves one back: a group held stopped skips
// what it has no use for, and a member that committed further meanwhile
// keeps its place. It returns how many partitions moved, and refuses with
// ErrGroupActive while the group has members (they would overwrite it, and
// they read the records themselves).
func ForwardTo(ctx context.Context, adm *kadm.Client, group string, to kadm.Offsets) (int, error) {
	if err := requireInactive(ctx, adm, group); err != nil {
		return 0, err
	}
	committed, err := adm.FetchOffsets(ctx, group)
	if err != nil {
		return 0, fmt.Errorf("committed offsets of %s: %w", group, err)
	}
	next := kadm.Offsets{}
	to.Each(func(o kadm.Offset) {
		at := int64(-1)
		if c, ok := committed.Lookup(o.Topic, o.Partition); ok {
			at = c.At
		}
		if o.At > max(at, 0) {
			next.AddOffset(o.Topic, o.Partition, o.At, -1)
		}
	})
	if len(next) == 0 {
		return 0, nil
	}
	// As in Rewind: the broker refuses a commit from outside a group that
	// gained a member since the check.
	if err := adm.CommitAllOffsets(ctx, group, next); err != nil {
		return 0, fmt.Errorf("forward offsets of %s: %w", group, err)
	}
	n := 0
	next.Each(func(kadm.Offset) { n++ })
	return n, nil
}
