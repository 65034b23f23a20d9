package main

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// member builds a coordinator's record of one member: what it owned when
// it joined and what the leader assigned it.
func member(id string, owned, assigned []int32) kmsg.GroupMetadataValueMember {
	meta := kmsg.ConsumerMemberMetadata{Version: 1, Topics: []string{"t"},
		OwnedPartitions: []kmsg.ConsumerMemberMetadataOwnedPartition{{Topic: "t", Partitions: owned}}}
	as := kmsg.ConsumerMemberAssignment{Topics: []kmsg.ConsumerMemberAssignmentTopic{{Topic: "t", Partitions: assigned}}}
	m := kmsg.NewGroupMetadataValueMember()
	m.MemberID, m.Subscription, m.Assignment = id, meta.AppendTo(nil), as.AppendTo(nil)
	return m
}

func groupRecord(version int16, group string, gen int32, members ...kmsg.GroupMetadataValueMember) (key, value []byte) {
	k := kmsg.GroupMetadataKey{Version: 2, Group: group}
	v := kmsg.NewGroupMetadataValue()
	v.Version, v.ProtocolType, v.Generation, v.Members = version, "consumer", gen, members
	return k.AppendTo(nil), v.AppendTo(nil)
}

// The check reads generations as the coordinator stores them (value
// versions 3 and the flexible 4 Kafka 4 writes), knows a round that took
// partitions back from a member, and reads nothing into offset commits or
// tombstones.
func TestGroupRecordsAreReadAsTheCoordinatorStoresThem(t *testing.T) {
	t.Parallel()
	for _, version := range []int16{3, 4} {
		key, value := groupRecord(version, "chaos.credits", 7,
			member("m-b", []int32{0, 1, 2}, []int32{0, 1}), member("m-a", nil, []int32{3}))
		group, g, ok := parseGroupRecord(key, value)
		if !ok || group != "chaos.credits" || g.n != 7 || !slices.Equal(g.members, []string{"m-a", "m-b"}) || !g.revoked {
			t.Errorf("v%d: got %q %+v %v, want chaos.credits generation 7 of m-a, m-b revoking", version, group, g, ok)
		}
		key, value = groupRecord(version, "chaos.credits", 8,
			member("m-b", []int32{0, 1}, []int32{0, 1}), member("m-a", []int32{3}, []int32{2, 3}))
		if _, g, _ := parseGroupRecord(key, value); g.revoked {
			t.Errorf("v%d: generation 8 revokes nothing, read as revoking", version)
		}
	}
	key, _ := groupRecord(4, "chaos.credits", 1)
	if _, _, ok := parseGroupRecord(key, nil); ok {
		t.Error("a tombstone read as a generation")
	}
	commitKey := (&kmsg.OffsetCommitKey{Version: 1, Group: "chaos.credits", Topic: "t"}).AppendTo(nil)
	commitValue := (&kmsg.OffsetCommitValue{Version: 3, Offset: 42}).AppendTo(nil)
	if _, _, ok := parseGroupRecord(commitKey, commitValue); ok {
		t.Error("an offset commit read as a generation")
	}
}

// Each rebalance is counted once, in the window of the fault that caused
// it, and a window holding more than its allowance is a violation: a
// cooperative follow-up round is part of the rebalance before it, a
// generation missing from the log is one more.
func TestRebalancesAreHeldToEachFaultsAllowance(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1_700_000_000, 0)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	c := &chaos{consumers: []string{"consume-a", "consume-b"}}
	windows := []*window{
		{cause: causeStartUp, from: at(0)},
		{cause: faultLeader, from: at(10)},
		{cause: faultConsumer, target: "consume-a", from: at(20)},
		{cause: faultPause, target: "relay-a", from: at(30)},
		{cause: faultPause, target: "consume-b", from: at(40)},
		{cause: faultKafka, from: at(50)},
	}
	for _, w := range windows {
		w.allowed = c.allowance(w)
	}
	if got := []int{windows[0].allowed, windows[1].allowed, windows[2].allowed, windows[3].allowed, windows[4].allowed, windows[5].allowed}; !slices.Equal(got, []int{2, 0, 2, 0, 2, 1}) {
		t.Fatalf("allowances %v, want [2 0 2 0 2 1]", got)
	}
	gen := func(n int32, s int, revoked bool) generation {
		return generation{n: n, at: at(s), members: []string{"m"}, revoked: revoked}
	}
	emptied := func(n int32, s int) generation { return generation{n: n, at: at(s)} }
	for _, tc := range []struct {
		name      string
		gens      []generation
		perWindow []int
		followUps int
		over      []string // causes whose window is over its allowance
	}{
		{
			name: "a run within its allowances",
			// a joins; b joins, taking partitions from a in two rounds; a
			// dies and its restart joins within the session (one round);
			// the Kafka outage makes every member join again.
			gens:      []generation{gen(1, 1, false), gen(2, 2, true), gen(3, 2, false), gen(4, 26, false), gen(5, 55, false)},
			perWindow: []int{2, 0, 1, 0, 0, 1}, followUps: 1,
		},
		{
			name:      "a kill that rebalances three times",
			gens:      []generation{gen(1, 1, false), gen(2, 2, false), gen(3, 21, false), gen(4, 23, false), gen(5, 27, false)},
			perWindow: []int{2, 0, 3, 0, 0, 0}, over: []string{faultConsumer},
		},
		{
			name:      "a rebalance after a relay's pause",
			gens:      []generation{gen(1, 1, false), gen(2, 2, false), gen(3, 33, false)},
			perWindow: []int{2, 0, 0, 1, 0, 0}, over: []string{faultPause},
		},
		{
			name: "a generation the log never stored",
			// 7 follows 5: generation 6 completed a join but never a sync.
			gens:      []generation{gen(1, 1, false), gen(2, 2, false), gen(5, 52, true), gen(7, 53, false)},
			perWindow: []int{2, 0, 0, 0, 0, 5}, over: []string{faultKafka},
		},
		{
			name: "a group left empty by an outage, then joined again",
			// The member's session lapsed while the cluster was away: the
			// coordinator stored the group empty, then the member's join.
			gens:      []generation{gen(1, 1, false), gen(2, 2, false), emptied(3, 55), gen(4, 56, false)},
			perWindow: []int{2, 0, 0, 0, 0, 1},
		},
		{
			name:      "a group left empty, then joined twice",
			gens:      []generation{gen(1, 1, false), gen(2, 2, false), emptied(3, 55), gen(4, 56, false), gen(5, 57, false)},
			perWindow: []int{2, 0, 0, 0, 0, 2}, over: []string{faultKafka},
		},
		{
			name:      "a generation stored twice and one after the run",
			gens:      []generation{gen(1, 1, false), gen(1, 1, false), gen(2, 90, false)},
			perWindow: []int{1, 0, 0, 0, 0, 0},
		},
	} {
		got := count(tc.gens, windows, at(60))
		if !slices.Equal(got.perWindow, tc.perWindow) || got.followUps != tc.followUps {
			t.Errorf("%s: per window %v with %d follow-ups, want %v with %d", tc.name, got.perWindow, got.followUps, tc.perWindow, tc.followUps)
		}
		r, over := judge("chaos.credits", got, windows)
		if r.Allowed != 7 || r.Rebalances != sum(tc.perWindow) {
			t.Errorf("%s: %d of %d allowed, want %d of 7", tc.name, r.Rebalances, r.Allowed, sum(tc.perWindow))
		}
		if len(over) != len(tc.over) {
			t.Errorf("%s: violations %q, want one after each of %v", tc.name, over, tc.over)
		}
		for i := range min(len(over), len(tc.over)) {
			if !strings.Contains(over[i], " after "+tc.over[i]) {
				t.Errorf("%s: violation %q, want one after %s", tc.name, over[i], tc.over[i])
			}
		}
	}
}

func sum(xs []int) int {
	n := 0
	for _, x := range xs {
		n += x
	}
	return n
}
