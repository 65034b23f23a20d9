package main

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicehq/sluice/internal/envelope"
)

// kafkaReader reads every topic of the run from the start, outside any
// group, and keeps which outbox rows reached Kafka and how often: the
// checks' view of Kafka, independent of Sluice's consumers.
type kafkaReader struct {
	cl *kgo.Client

	mu   sync.Mutex
	seen map[string]int // outbox id -> records carrying it
	// events are the records of tenants' events, dead letters aside, in
	// the order read (each partition's in its order).
	events []kafkaEvent
}

// kafkaEvent is one record of a tenant's event.
type kafkaEvent struct {
	topic, key, tenant, eventType string
	identity                      string // ce_source and ce_id: one event, however often published
}

func newKafkaReader(brokers []string, prefix string) (*kafkaReader, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...),
		kgo.ConsumeRegex(), kgo.ConsumeTopics("^"+regexp.QuoteMeta(prefix)+`\..*`),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		// Topics are created by the stages after the reader starts.
		kgo.MetadataMinAge(time.Second), kgo.MetadataMaxAge(2*time.Second))
	if err != nil {
		return nil, fmt.Errorf("kafka reader: %w", err)
	}
	return &kafkaReader{cl: cl, seen: map[string]int{}}, nil
}

func (r *kafkaReader) run(ctx context.Context) {
	for ctx.Err() == nil {
		fs := r.cl.PollFetches(ctx)
		fs.EachRecord(func(rec *kgo.Record) {
			h := map[string]string{}
			for _, kv := range rec.Headers {
				h[kv.Key] = string(kv.Value)
			}
			r.mu.Lock()
			if id, ok := h[envelope.HeaderOutboxID]; ok {
				r.seen[id]++
			}
			if t := h[envelope.HeaderTenantID]; t != "" && !strings.HasSuffix(rec.Topic, ".dlq") {
				r.events = append(r.events, kafkaEvent{topic: rec.Topic, key: string(rec.Key), tenant: t,
					eventType: h[envelope.HeaderType], identity: h[envelope.HeaderSource] + " " + h[envelope.HeaderID]})
			}
			r.mu.Unlock()
		})
	}
}

// tenantEvents returns the tenants' events read so far.
func (r *kafkaReader) tenantEvents() []kafkaEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events)
}

// missing returns the ids of ids not seen in Kafka.
func (r *kafkaReader) missing(ids []string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, id := range ids {
		if r.seen[id] == 0 {
			out = append(out, id)
		}
	}
	return out
}

// republished counts outbox rows published more than once (a relay crash
// between produce and confirm replays; consumers must not care).
func (r *kafkaReader) republished() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, c := range r.seen {
		if c > 1 {
			n++
		}
	}
	return n
}

func (r *kafkaReader) close() { r.cl.Close() }

// groupsCaughtUp reports whether every group committed up to the end of
// every partition it reads.
func groupsCaughtUp(ctx context.Context, adm *kadm.Client, groups []string) (bool, error) {
	lags, err := adm.Lag(ctx, groups...)
	if err != nil {
		return false, err
	}
	for _, g := range groups {
		l, ok := lags[g]
		if !ok {
			return false, fmt.Errorf("group %s not described", g)
		}
		if err := l.Error(); err != nil {
			return false, fmt.Errorf("group %s: %w", g, err)
		}
		if t := l.Lag.Total(); t > 0 {
			return false, fmt.Errorf("group %s: lag %d", g, t)
		}
	}
	return true, nil
}
