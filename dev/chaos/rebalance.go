package main

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"time"
)

// rebalanceRule is the bound the check holds every consumer group to, in
// rebalances counted from the generations its coordinator stored in
// __consumer_offsets. A generation that only completes the one before it
// (the cooperative protocol's second round, KIP-429, which hands over the
// partitions the first round revoked) is part of that rebalance. So is one
// that left the group empty (its only members' sessions lapsed): it handed
// nothing between members, and the join that follows is the rebalance. A
// one-member group whose member outlives its session, through a kill or a
// whole-cluster outage, stores both.
//   - start-up: one per consumer instance (each first join);
//   - a consumer kill: two, one for the kill (the dead member's partitions
//     handed over when its session expires) and one for the restart's join;
//     the two are one when the restart joins within the dead member's
//     session, as it usually does;
//   - a consumer paused by SIGSTOP: two, as for a kill, since the run's
//     pause (up to 4.5 s) comes within a heartbeat of the 6 s session, and
//     a pause past it is a kill and a restart as Kafka sees it;
//   - a whole-cluster Kafka outage, one broker killed: one (every
//     coordinator restarts or moves; a member that lost its coordinator for
//     longer than its session joins again);
//   - a consumer replaced by an upgrade or a rollback (stopped with
//     SIGTERM, started from the other binary): two, its leaving and its
//     joining;
//   - anything else (ingest, relay, Postgres, the consumers' connections to
//     it, the slot, a replaced ingest or relay): none.
const rebalanceRule = "per group, from the generations stored in __consumer_offsets (a cooperative follow-up round is part of the rebalance before it, a generation that left the group empty part of the join after it): " +
	"at start-up 1 per consumer instance; after a consumer kill 2 (the kill 1, the restart's join 1, usually merged into one); " +
	"after a consumer SIGSTOP pause 2 (as a kill, should it outlast the session); after a consumer replaced by an upgrade or rollback 2 (its leaving, its joining); after a Kafka outage or a broker kill 1; after any other fault 0"

const causeStartUp = "start_up"

// window is a stretch of the run and what may rebalance a group in it: the
// start-up, or one fault until the groups settled after it.
type window struct {
	cause   string // causeStartUp or a fault kind
	target  string // the consumer instance it killed or paused, if any
	from    time.Time
	allowed int // rebalances each group may take in it
}

// allowance is how many rebalances each group may take in w (see
// rebalanceRule).
func (c *chaos) allowance(w *window) int {
	consumer := slices.Contains(c.consumers, w.target)
	switch {
	case w.cause == causeStartUp:
		return len(c.consumers)
	case w.cause == faultConsumer, w.cause == faultLock, w.cause == faultPause && consumer:
		return 2
	case (w.cause == causeUpgrade || w.cause == causeRollback) && consumer:
		// A member stopped (it leaves the group) and started from another
		// binary (it joins again).
		return 2
	case w.cause == faultKafka, w.cause == faultBroker:
		return 1
	}
	return 0
}

// tally is one group's rebalances.
type tally struct {
	generations int32 // completed by the coordinator, stored or not
	followUps   int   // cooperative second rounds among them
	emptied     int   // generations that left the group without members
	perWindow   []int // rebalances in each window
}

func (t tally) rebalances() int { return int(t.generations) - t.followUps - t.emptied }

// count places each rebalance of a group, counted from its stored
// generations up to until, in the window its record fell in. A generation
// number skipped in the log is a rebalance whose round never completed a
// sync (another join overtook it): counted, in the window of the next one.
func count(gens []generation, windows []*window, until time.Time) tally {
	t := tally{perWindow: make([]int, len(windows))}
	var prev int32
	owed := false // the previous generation revoked partitions
	for _, g := range gens {
		if g.n <= prev || g.at.After(until) {
			continue
		}
		n := int(g.n - prev)
		if n == 1 && owed {
			t.followUps++
			n = 0
		}
		if len(g.members) == 0 && n > 0 {
			t.emptied++
			n--
		}
		if len(windows) > 0 {
			t.perWindow[windowAt(windows, g.at)] += n
		}
		t.generations, prev, owed = g.n, g.n, g.revoked
	}
	return t
}

// windowAt returns the index of the window holding time at.
func windowAt(windows []*window, at time.Time) int {
	i := 0
	for j, w := range windows {
		if !w.from.After(at) {
			i = j
		}
	}
	return i
}

// membership returns each group's member ids as its coordinator has them
// now, and whether every group is Stable.
func (c *chaos) membership(ctx context.Context) (map[string][]string, bool, error) {
	described, err := c.adm.DescribeGroups(ctx, c.groups...)
	if err != nil {
		return nil, false, err
	}
	out := map[string][]string{}
	stable := true
	for _, g := range c.groups {
		d, ok := described[g]
		if !ok || d.Err != nil {
			return nil, false, fmt.Errorf("describe group %s: %v", g, d.Err)
		}
		stable = stable && d.State == "Stable"
		for _, m := range d.Members {
			out[g] = append(out[g], m.MemberID)
		}
		slices.Sort(out[g])
	}
	return out, stable, nil
}

// settle waits until every group's coordinator is Stable with one member per
// consumer instance, its newest stored generation has those members and owes
// no follow-up round, and, when replaced is set (a consumer was killed), a
// member of before is gone: the fault's rebalances are then over and counted
// in its window, not the next fault's.
func (c *chaos) settle(ctx context.Context, before map[string][]string, replaced bool) error {
	var why string
	began := time.Now()
	err := poll(ctx, 45*time.Second, "the consumer groups to settle", func() (bool, error) {
		now, stable, err := c.membership(ctx)
		if err != nil || !stable {
			why = "not every group is Stable"
			return false, err
		}
		for _, g := range c.groups {
			latest, _ := c.groupLog.latest(g)
			switch {
			case len(now[g]) != len(c.consumers):
				why = fmt.Sprintf("%s has %d members for %d consumers", g, len(now[g]), len(c.consumers))
			case !slices.Equal(latest.members, now[g]):
				why = g + ": the stored generation is not the coordinator's membership yet"
			case latest.revoked:
				why = g + ": a follow-up round is owed"
			case replaced && slices.Equal(before[g], now[g]):
				why = g + ": the killed member is still there"
			default:
				continue
			}
			return false, nil
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("%w: %s", err, why)
	}
	c.log.Info("consumer groups settled", slog.Duration("took", time.Since(began)))
	return nil
}

// checkRebalances counts every group's rebalances from __consumer_offsets
// and holds each window to its allowance.
func (c *chaos) checkRebalances(ctx context.Context) error {
	until := time.Now()
	if err := poll(ctx, 30*time.Second, "the group log to catch up", func() (bool, error) {
		return c.groupLog.caughtUp(ctx, c.adm)
	}); err != nil {
		return err
	}
	c.report.RebalanceRule = rebalanceRule
	for _, g := range c.groups {
		gens := c.groupLog.history(g)
		r, over := judge(g, count(gens, c.windows, until), c.windows)
		for _, gen := range gens {
			r.Stored = append(r.Stored, gen.String())
		}
		c.report.Rebalances[g] = r
		for _, v := range over {
			c.violate("%s", v)
		}
	}
	return nil
}

// judge sums group's rebalances by cause and names every window in which
// they passed its allowance.
func judge(group string, t tally, windows []*window) (groupRebalances, []string) {
	r := groupRebalances{Generations: t.generations, FollowUps: t.followUps, Emptied: t.emptied, Rebalances: t.rebalances(), ByCause: map[string]int{}}
	var over []string
	for i, w := range windows {
		r.Allowed += w.allowed
		r.ByCause[w.cause] += t.perWindow[i]
		if t.perWindow[i] > w.allowed {
			over = append(over, fmt.Sprintf("group %s rebalanced %d times after %s at %s, allowed %d (rebalance_rule in the report)",
				group, t.perWindow[i], describe(w), w.from.Format("15:04:05.000"), w.allowed))
		}
	}
	return r, over
}

func (g generation) String() string {
	short := make([]string, len(g.members))
	for i, m := range g.members {
		short[i] = m[max(0, len(m)-4):]
	}
	s := fmt.Sprintf("%d@%s %v", g.n, g.at.Format("15:04:05.000"), short)
	if g.revoked {
		s += "+revoke"
	}
	return s
}

func describe(w *window) string {
	if w.target != "" {
		return w.cause + " of " + w.target
	}
	return w.cause
}
