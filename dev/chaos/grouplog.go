package main

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// offsetsTopic is where group coordinators keep their state: a
// GroupMetadata record for every generation a classic group completes.
const offsetsTopic = "__consumer_offsets"

// generation is one completed rebalance of a consumer group, as its
// coordinator stored it.
type generation struct {
	n       int32
	at      time.Time // the record's timestamp: when the coordinator stored it
	members []string  // member ids, sorted
	// revoked: a member gave up partitions it owned, so the cooperative
	// protocol (KIP-429) owes a follow-up round that hands them over.
	revoked bool
}

// groupLog reads __consumer_offsets from the start, outside any group, and
// keeps every generation of every consumer group: the check's view of
// rebalances, from Kafka itself rather than from Sluice's counters.
type groupLog struct {
	cl *kgo.Client

	mu   sync.Mutex
	gens map[string][]generation // group -> generations in log order
	pos  map[int32]int64         // partition -> next offset to read
}

func newGroupLog(brokers []string) (*groupLog, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ConsumeTopics(offsetsTopic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		// The topic appears with the first group.
		kgo.MetadataMinAge(time.Second), kgo.MetadataMaxAge(2*time.Second))
	if err != nil {
		return nil, fmt.Errorf("group log: %w", err)
	}
	return &groupLog{cl: cl, gens: map[string][]generation{}, pos: map[int32]int64{}}, nil
}

func (l *groupLog) run(ctx context.Context) {
	for ctx.Err() == nil {
		fs := l.cl.PollFetches(ctx)
		fs.EachRecord(func(rec *kgo.Record) {
			group, gen, ok := parseGroupRecord(rec.Key, rec.Value)
			l.mu.Lock()
			defer l.mu.Unlock()
			l.pos[rec.Partition] = rec.Offset + 1
			if ok {
				gen.at = rec.Timestamp
				l.gens[group] = append(l.gens[group], gen)
			}
		})
	}
}

func (l *groupLog) close() { l.cl.Close() }

// parseGroupRecord reads a GroupMetadata record of a consumer group;
// offset commits (key versions 0 and 1), the new protocol's records
// (versions 3 and up), tombstones and records it cannot read are not.
func parseGroupRecord(key, value []byte) (string, generation, bool) {
	if len(key) < 2 || binary.BigEndian.Uint16(key) != 2 || value == nil {
		return "", generation{}, false
	}
	var k kmsg.GroupMetadataKey
	var v kmsg.GroupMetadataValue
	if k.ReadFrom(key) != nil || v.ReadFrom(value) != nil || v.ProtocolType != "consumer" {
		return "", generation{}, false
	}
	g := generation{n: v.Generation}
	for _, m := range v.Members {
		g.members = append(g.members, m.MemberID)
		g.revoked = g.revoked || revokes(m.Subscription, m.Assignment)
	}
	slices.Sort(g.members)
	return k.Group, g, true
}

// revokes reports whether an assignment leaves out a partition the member
// said it owned when it joined.
func revokes(subscription, assignment []byte) bool {
	var meta kmsg.ConsumerMemberMetadata
	var as kmsg.ConsumerMemberAssignment
	if meta.ReadFrom(subscription) != nil || as.ReadFrom(assignment) != nil {
		return false
	}
	kept := map[string][]int32{}
	for _, t := range as.Topics {
		kept[t.Topic] = append(kept[t.Topic], t.Partitions...)
	}
	for _, t := range meta.OwnedPartitions {
		for _, p := range t.Partitions {
			if !slices.Contains(kept[t.Topic], p) {
				return true
			}
		}
	}
	return false
}

// history returns group's generations stored so far.
func (l *groupLog) history(group string) []generation {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.gens[group])
}

// latest returns group's newest stored generation.
func (l *groupLog) latest(group string) (generation, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	gs := l.gens[group]
	if len(gs) == 0 {
		return generation{}, false
	}
	return gs[len(gs)-1], true
}

// caughtUp reports whether everything stored in __consumer_offsets up to
// now has been read.
func (l *groupLog) caughtUp(ctx context.Context, adm *kadm.Client) (bool, error) {
	ends, err := adm.ListEndOffsets(ctx, offsetsTopic)
	if err != nil {
		return false, err
	}
	if err := ends.Error(); err != nil {
		return false, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	done := true
	ends.Each(func(o kadm.ListedOffset) {
		done = done && l.pos[o.Partition] >= o.Offset
	})
	return done, nil
}
