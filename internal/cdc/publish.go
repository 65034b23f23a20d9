package cdc

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/plugin/kotel"
	"go.opentelemetry.io/otel/propagation"

	"github.com/sluicehq/sluice/internal/kafka"
)

// publisher hands records to Kafka and counts each one in a watermark until
// Kafka acknowledged it or it was parked. The stream and resync share it, so
// both publish through one path with the same guarantees.
type publisher struct {
	// ctx outlives a shutdown request, so records already handed to Kafka
	// can still be acknowledged and confirmed while the relay drains.
	ctx      context.Context
	producer *kgo.Client
	wm       *watermark
	parker   *parker
	metrics  *metrics
	failed   chan error // a produce error that ends the session
	// unlinger is always done: Flush with it ends every linger and returns
	// without waiting for acknowledgements (sendNow).
	unlinger context.Context
	// traces, when tracing is on, reads the trace context ingest stored
	// with the row, so the produce span (the producer's kotel hook)
	// continues the trace of the request that wrote it; nil: off.
	traces propagation.TextMapPropagator
	// missing settles records whose topic Kafka does not know.
	missing *missingTopics
}

func newPublisher(ctx context.Context, producer *kgo.Client, wm *watermark, parker *parker, m *metrics, traces propagation.TextMapPropagator, topics topicPolicy) *publisher {
	unlinger, cancel := context.WithCancel(context.Background())
	cancel()
	p := &publisher{ctx: ctx, producer: producer, wm: wm, parker: parker, metrics: m, failed: make(chan error, 1), traces: traces,
		unlinger: unlinger}
	p.missing = &missingTopics{pub: p, adm: kadm.NewClient(producer), log: parker.log, grace: topics.grace, create: topics.create,
		spec: topics.spec, recheck: 250 * time.Millisecond, queues: map[string][]heldRecord{}}
	return p
}

// topicPolicy says what becomes of a record whose topic is missing: the
// topics the relay may create (nil: none) and with what settings, and how
// long the others may wait for theirs before they are parked.
type topicPolicy struct {
	create func(topic string) bool
	spec   kafka.TopicSpec
	grace  time.Duration
}

// sendNow puts what the producer holds in its next requests, whatever is
// left of the linger.
func (p *publisher) sendNow() {
	_ = p.producer.Flush(p.unlinger)
}

// publish sends rec, read at lsn, as part of t.
func (p *publisher) publish(t *txn, rec *kgo.Record, lsn pglogrepl.LSN) {
	size := int(kafka.RecordSize(rec))
	p.wm.add(t, size)
	p.metrics.produced.Inc()
	if p.traces != nil {
		rec.Context = p.traces.Extract(p.ctx, kotel.NewRecordCarrier(rec))
	}
	r := heldRecord{t: t, rec: rec, size: size, lsn: lsn, readAt: time.Now()}
	if p.missing.holding(r) {
		return
	}
	p.produce(r)
}

// produce hands r, already counted in the watermark, to Kafka.
func (p *publisher) produce(r heldRecord) {
	t, size := r.t, r.size
	p.producer.Produce(p.ctx, r.rec, func(rec *kgo.Record, err error) {
		switch {
		case err == nil:
			p.metrics.acked.Inc()
			p.metrics.ackSeconds.Observe(time.Since(r.readAt).Seconds())
			if !t.at.IsZero() {
				p.metrics.commitToAck.Observe(time.Since(t.at).Seconds())
			}
			p.wm.ack(t, size)
		case isPermanent(err):
			p.parker.park(p.ctx, p.wm, t, rec, size, r.lsn, ReasonRefused, err)
		case isMissingTopic(err) && p.ctx.Err() == nil:
			// Not the session's end: the topic is made, waited for or given
			// up on, for this record alone (and its topic's).
			r.reason = err
			p.missing.hold(r)
		default:
			// Not acknowledged, so never confirmed: a new session replays it
			// from the confirmed position. If the session is ending anyway
			// (cancelled, client closed) there is nothing else to do.
			select {
			case p.failed <- fmt.Errorf("produce to %s: %w", rec.Topic, err):
			default:
			}
		}
	})
}

// unreadable counts a row that could not be turned into a record: it will
// not become readable by retrying, so it is parked and the stream moves on.
func (p *publisher) unreadable(t *txn, lsn pglogrepl.LSN, reason error) {
	p.wm.add(t, 0)
	p.parker.park(p.ctx, p.wm, t, nil, 0, lsn, ReasonUnreadable, reason)
}

// awaitRoom is backpressure, for the stream and resync alike: it returns
// once fewer than records are unacknowledged, in under bytes, waking on
// every acknowledgement and at least every tick, after which tick (when
// set) runs; the stream reports its status to Postgres there. A record
// Kafka did not acknowledge ends the wait with its error.
func (p *publisher) awaitRoom(ctx context.Context, records, bytes int, every time.Duration, tick func() error) error {
	for {
		if pr := p.wm.progress(); pr.inflight < records && pr.bytes < bytes {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-p.failed:
			return err
		case <-p.wm.acked:
		case <-time.After(every):
		}
		if tick == nil {
			continue
		}
		if err := tick(); err != nil {
			return err
		}
	}
}
