package cdc

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/twmb/franz-go/pkg/kgo"
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
}

func newPublisher(ctx context.Context, producer *kgo.Client, wm *watermark, parker *parker, m *metrics) *publisher {
	return &publisher{ctx: ctx, producer: producer, wm: wm, parker: parker, metrics: m, failed: make(chan error, 1)}
}

// publish sends rec, read at lsn, as part of t.
func (p *publisher) publish(t *txn, rec *kgo.Record, lsn pglogrepl.LSN) {
	size := recordSize(rec)
	p.wm.add(t, size)
	p.metrics.produced.Inc()
	readAt := time.Now()
	p.producer.Produce(p.ctx, rec, func(rec *kgo.Record, err error) {
		switch {
		case err == nil:
			p.metrics.acked.Inc()
			p.metrics.ackSeconds.Observe(time.Since(readAt).Seconds())
			if !t.at.IsZero() {
				p.metrics.commitToAck.Observe(time.Since(t.at).Seconds())
			}
			p.wm.ack(t, size)
		case isPermanent(err):
			p.parker.park(p.ctx, p.wm, t, rec, size, lsn, err)
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
	p.parker.park(p.ctx, p.wm, t, nil, 0, lsn, reason)
}

// recordSize approximates the memory a record holds while in flight.
func recordSize(rec *kgo.Record) int {
	n := len(rec.Topic) + len(rec.Key) + len(rec.Value) + 64
	for _, h := range rec.Headers {
		n += len(h.Key) + len(h.Value) + 16
	}
	return n
}
