package cdc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicehq/sluice/internal/envelope"
	"github.com/sluicehq/sluice/internal/kafka"
)

// isMissingTopic reports whether Kafka failed a record because its topic
// does not exist (or not yet on the brokers asked), or because the relay's
// user may not write to it: either way the topic is missing for the relay,
// and one record for it must not stall every tenant's.
func isMissingTopic(err error) bool {
	return kafka.Classify(err) == kafka.FaultTopicMissing || isForbidden(err)
}

// isForbidden reports whether Kafka refused the relay's user the topic (an
// ACL missing: a topic outside the deployment's prefix, or a grant lost).
func isForbidden(err error) bool { return kafka.Classify(err) == kafka.FaultTopicDenied }

// ownTopicName is the shape of Sluice's own topic names past the prefix:
// a resource topic (sluice.invoices) or a tenants' shared one
// (sluice.tenant.order). Nothing else is ever created on the relay's
// word: a dead-letter topic, a name with more dots, a typo's upper case.
var ownTopicName = regexp.MustCompile(`^(tenant\.)?[a-z][a-z0-9_-]{0,62}$`)

// Creatable reports whether the relay may create topic when it is missing
// and Config.CreateMissingTopics is on: only names of Sluice's own
// patterns under the deployment's prefix.
func Creatable(topics envelope.Topics, topic string) bool {
	rest, ok := strings.CutPrefix(topic, topics.Resource(""))
	return ok && ownTopicName.MatchString(rest)
}

// missingTopics holds the records whose topic Kafka does not know, per
// topic and in the order they failed, and settles them: the topic is
// created when the deployment allows it, the records sent again once it
// exists, or parked when it still does not after the grace (counted from
// when each was read off the slot). While a topic has records held, the
// stream's later records for it queue behind them, so the key's order
// holds across the wait.
type missingTopics struct {
	pub    *publisher
	adm    *kadm.Client
	log    *slog.Logger
	grace  time.Duration
	create func(topic string) bool // nil: never
	spec   kafka.TopicSpec
	// recheck is the pause between two looks at a topic that is missing.
	recheck time.Duration

	held   atomic.Int32 // topics with records held; 0 keeps publish lock-free
	mu     sync.Mutex
	queues map[string][]heldRecord
}

// heldRecord is a record counted in the watermark and not yet settled.
type heldRecord struct {
	t      *txn
	rec    *kgo.Record
	size   int
	lsn    pglogrepl.LSN
	readAt time.Time
	reason error
}

// hold queues r behind the records held for its topic, starting the
// topic's settler when it has none. It never blocks: produce callbacks
// call it.
func (m *missingTopics) hold(r heldRecord) {
	m.mu.Lock()
	defer m.mu.Unlock()
	q, running := m.queues[r.rec.Topic]
	m.queues[r.rec.Topic] = append(q, r)
	if running {
		return
	}
	m.held.Add(1)
	go m.settle(r.rec.Topic)
}

// holding queues r when its topic has records held, reporting whether it
// did.
func (m *missingTopics) holding(r heldRecord) bool {
	if m.held.Load() == 0 {
		return false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	q, ok := m.queues[r.rec.Topic]
	if ok {
		m.queues[r.rec.Topic] = append(q, r)
	}
	return ok
}

// settle runs until topic has no record held: each look either finds (or
// makes) the topic, and sends everything held again, or parks the records
// whose grace has passed.
func (m *missingTopics) settle(topic string) {
	ctx := m.pub.ctx
	for {
		state := m.ensure(ctx, topic)
		exists := state == topicExists
		m.mu.Lock()
		q := m.queues[topic]
		n := len(q)
		if !exists {
			n = 0
			// Parked only on Kafka's word: a cluster that cannot be asked
			// is an outage, waited out (backpressure) like any other.
			for (state == topicMissing || state == topicForbidden) && n < len(q) && time.Since(q[n].readAt) >= m.grace {
				n++
			}
		}
		settled := q[:n:n]
		m.queues[topic] = q[n:]
		m.mu.Unlock()
		// Outside the lock (a produce may call back at once), the topic
		// still held: later records keep queueing behind these.
		for _, r := range settled {
			switch {
			case exists:
				m.pub.produce(r)
			case state == topicForbidden:
				m.pub.parker.park(ctx, m.pub.wm, r.t, r.rec, r.size, r.lsn, ReasonNotAuthorized,
					fmt.Errorf("the relay's Kafka user may not write to topic %s after a grace of %s (grant WRITE: sluice doctor names the ACL): %w", topic, m.grace, r.reason))
			default:
				m.pub.parker.park(ctx, m.pub.wm, r.t, r.rec, r.size, r.lsn, ReasonMissingTopic,
					fmt.Errorf("topic %s does not exist after a grace of %s: %w", topic, m.grace, r.reason))
			}
		}
		m.mu.Lock()
		q = m.queues[topic]
		if len(q) == 0 {
			// A record for the topic published from now on goes to Kafka
			// itself, behind these.
			delete(m.queues, topic)
			m.held.Add(-1)
			m.mu.Unlock()
			return
		}
		wait := time.Duration(0)
		if !exists {
			wait = min(m.recheck, time.Until(q[0].readAt.Add(m.grace)))
		}
		m.mu.Unlock()
		select {
		case <-ctx.Done():
			return // not acknowledged: the next session replays them
		case <-time.After(wait):
		}
	}
}

// topicState is what Kafka says of a topic.
type topicState int

const (
	topicUnknown   topicState = iota // Kafka could not be asked, or the topic is not ready
	topicMissing                     // Kafka says it does not exist
	topicForbidden                   // Kafka says the relay's user may not write to it
	topicExists                      // every partition has a leader, and the user may write
)

// ensure says whether topic exists now, creating it first when the
// deployment allows.
func (m *missingTopics) ensure(ctx context.Context, topic string) topicState {
	ctx, cancel := context.WithTimeout(ctx, max(m.recheck, 2*time.Second))
	defer cancel()
	if m.create != nil && m.create(topic) {
		err := kafka.EnsureTopics(ctx, m.adm, m.spec, topic)
		if err == nil {
			m.log.Warn("created a missing topic", slog.String("topic", topic))
			return topicExists
		}
		m.log.Warn("creating a missing topic failed", slog.String("topic", topic), slog.Any("error", err))
		return topicMissing // not created: parked after the grace like any other
	}
	return m.lookup(ctx, topic)
}

// lookup is what Kafka says of topic, with the user's operations on it: a
// grant given meanwhile sends the records held, one still missing parks
// them.
func (m *missingTopics) lookup(ctx context.Context, topic string) topicState {
	details, err := m.adm.ListTopics(kadm.WithAuthorizedOps(ctx), topic)
	if ae := (*kadm.AuthError)(nil); errors.As(err, &ae) && isForbidden(ae.Err) {
		return topicForbidden
	}
	if err != nil {
		return topicUnknown
	}
	d, ok := details[topic]
	switch {
	case !ok || kafka.Classify(d.Err) == kafka.FaultTopicMissing:
		return topicMissing
	case isForbidden(d.Err):
		return topicForbidden
	case d.Err != nil || len(d.Partitions) == 0:
		return topicUnknown
	case len(d.AuthorizedOperations) > 0 && !slices.Contains(d.AuthorizedOperations, kadm.OpWrite) && !slices.Contains(d.AuthorizedOperations, kadm.OpAll):
		return topicForbidden
	}
	for _, p := range d.Partitions {
		if p.Leader < 0 || p.Err != nil {
			return topicUnknown
		}
	}
	return topicExists
}
