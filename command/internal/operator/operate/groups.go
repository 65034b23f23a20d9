package operate

import (
	"context"
	"slices"

	"github.com/sluicehq/sluice/internal/cdc"
	"github.com/sluicehq/sluice/internal/consumers/groups"
	"github.com/sluicehq/sluice/internal/consumers/offsets"
)

// GroupLag is one consumer group's lag: its total, its slowest partition,
// and every partition.
type GroupLag struct {
	Group string `json:"group"`
	State string `json:"state"`
	// Lag is the sum over partitions of end minus committed (-1: the group
	// never ran).
	Lag        int64            `json:"lag"`
	Slowest    *offsets.LagRow  `json:"slowest,omitempty"`
	Partitions []offsets.LagRow `json:"partitions"`
}

// everyGroup lists every group of the deployment, its effect groups and
// the dispatcher and fan-out whether they run here or not.
func (o *Operator) everyGroup() groups.Options {
	opts := o.cfg.Groups
	opts.EveryGroup = true
	return opts
}

// GroupNames are the deployment's consumer groups, the dispatcher's
// included.
func (o *Operator) GroupNames() []string {
	var names []string
	for _, g := range groups.List(o.cfg.Topics, o.everyGroup()) {
		names = append(names, g.ID)
	}
	return names
}

// ConsumerGroups returns the lag of the named groups (none: every group).
// A name that is not one of the deployment's groups is ErrNotFound.
// Unscoped callers only: groups read every tenant's records.
func (o *Operator) ConsumerGroups(ctx context.Context, scope *Scope, names ...string) ([]GroupLag, error) {
	if err := o.kafkaOp(scope); err != nil {
		return nil, err
	}
	known := o.GroupNames()
	if len(names) == 0 {
		names = known
	}
	for _, n := range names {
		if !slices.Contains(known, n) {
			return nil, &NotFoundError{What: "consumer group", ID: n, Known: known}
		}
	}
	rows, err := offsets.Lag(ctx, o.admin, names...)
	if err != nil {
		return nil, err
	}
	var out []GroupLag
	byGroup := map[string]int{}
	for _, r := range rows {
		i, ok := byGroup[r.Group]
		if !ok {
			i = len(out)
			byGroup[r.Group] = i
			out = append(out, GroupLag{Group: r.Group, State: r.State})
		}
		g := &out[i]
		if r.Lag < 0 {
			g.Lag = -1
			continue
		}
		g.Partitions = append(g.Partitions, r)
		g.Lag += r.Lag
	}
	for i := range out {
		g := &out[i]
		for j := range g.Partitions {
			if g.Slowest == nil || g.Partitions[j].Lag > g.Slowest.Lag {
				g.Slowest = &g.Partitions[j]
			}
		}
	}
	return out, nil
}

// Slot returns the relay's slot status (WAL it retains, whether a relay
// streams from it). Unscoped callers only.
func (o *Operator) Slot(ctx context.Context, scope *Scope) (cdc.SlotStatus, error) {
	if err := unscopedOnly(scope); err != nil {
		return cdc.SlotStatus{}, err
	}
	return cdc.ReadSlotStatus(ctx, o.pool, o.cfg.Slot)
}

// RewindMove is one partition's rewind and what it means: Reread records
// applied again (a rewind), or Skipped records never applied (a move
// forward). A partition the group never committed on (Current -1) counts
// neither.
type RewindMove struct {
	offsets.Move
	Reread  int64 `json:"reread"`
	Skipped int64 `json:"skipped"`
}

// Rewind moves a stopped group's committed offsets over every topic it
// reads, the way `sluice replay` and kafka-consumer-groups --reset-offsets
// do: a dry run (execute false) says what would be re-read per partition
// and commits nothing; executed, it commits exactly those offsets. A group
// with members is ErrGroupActive; an unknown one ErrNotFound. Unscoped
// callers only.
func (o *Operator) Rewind(ctx context.Context, scope *Scope, group string, target offsets.Target, execute bool) ([]RewindMove, error) {
	if err := o.kafkaOp(scope); err != nil {
		return nil, err
	}
	// As offsets.Target reads it: an offset counts when nothing else is named.
	if n := btoi(target.Earliest) + btoi(target.Latest) + btoi(!target.Time.IsZero()); n > 1 || (n == 0 && target.Offset < 0) {
		return nil, invalid("target", "name exactly one of earliest, latest, a time or an offset")
	}
	spec, ok := groups.Find(o.cfg.Topics, o.everyGroup(), group)
	if !ok {
		return nil, notFound("consumer group", group)
	}
	moves, err := offsets.Rewind(ctx, o.admin, group, spec.Topics, target, execute)
	if err != nil {
		return nil, err
	}
	out := make([]RewindMove, len(moves))
	for i, m := range moves {
		out[i] = RewindMove{Move: m}
		switch {
		case m.Current < 0:
		case m.New < m.Current:
			out[i].Reread = m.Current - m.New
		default:
			out[i].Skipped = m.New - m.Current
		}
	}
	return out, nil
}

func (o *Operator) kafkaOp(scope *Scope) error {
	if err := unscopedOnly(scope); err != nil {
		return err
	}
	if o.admin == nil {
		return ErrNoKafka
	}
	return nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
