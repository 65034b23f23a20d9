package cdc

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicehq/sluice/internal/envelope"
	"github.com/sluicehq/sluice/internal/kafka"
)

// isPermanent reports whether Kafka refused a record for good: retrying the
// same bytes can never succeed, so the record is parked instead of stalling
// the stream. An unknown topic is not among them: a topic just created is
// unknown to some brokers for a moment; missingTopics waits for it (or
// creates it) and parks the record only once the grace has passed.
func isPermanent(err error) bool {
	switch kafka.Classify(err) {
	case kafka.FaultTooLarge, kafka.FaultRecordRefused:
		return true
	}
	return false
}

// parker stores records that cannot be published. The record counts as
// done for the watermark only once its parked row is committed.
type parker struct {
	pool    *pgxpool.Pool
	log     *slog.Logger
	metrics *metrics
}

func newParker(pool *pgxpool.Pool, log *slog.Logger, m *metrics) *parker {
	return &parker{pool: pool, log: log, metrics: m}
}

// park runs in the background: it is called from produce callbacks, which
// must not block other partitions' acknowledgements. size is what the record
// counted for in the watermark.
// Reasons a record is parked for, the reason label of
// sluice_cdc_records_parked_total.
const (
	ReasonRefused      = "refused"       // Kafka refused it for good
	ReasonUnreadable   = "unreadable"    // the outbox row could not be made a record
	ReasonMissingTopic = "missing_topic" // its topic did not exist within the grace
	// ReasonNotAuthorized: the relay's Kafka user could not write to its
	// topic within the grace.
	ReasonNotAuthorized = "topic_not_authorized"
)

func (p *parker) park(ctx context.Context, wm *watermark, t *txn, rec *kgo.Record, size int, lsn pglogrepl.LSN, why string, reason error) {
	go func() {
		var topic *string
		var key, payload, headers []byte
		attrs := []any{slog.String("lsn", lsn.String()), slog.String("why", why), slog.Any("reason", reason)}
		logCtx := ctx
		if rec != nil && rec.Context != nil {
			logCtx = rec.Context // its produce span, when traced
		}
		if rec != nil {
			topic, key, payload = &rec.Topic, rec.Key, rec.Value
			h := map[string]string{}
			for _, kv := range rec.Headers {
				h[kv.Key] = string(kv.Value)
			}
			headers, _ = json.Marshal(h)
			attrs = append(attrs, slog.String("topic", rec.Topic), slog.String("outbox_id", h[envelope.HeaderOutboxID]),
				slog.String("event_id", h[envelope.HeaderID]))
		}
		for attempt := 1; ; attempt++ {
			_, err := p.pool.Exec(ctx, parkSQL, p.metrics.slot, lsn.String(), topic, key, headers, payload, reason.Error())
			if err == nil {
				break
			}
			if ctx.Err() != nil {
				return // not parked, not acknowledged: the next session replays it
			}
			p.log.WarnContext(logCtx, "parking a record failed, retrying", slog.Any("error", err), slog.Int("attempt", attempt))
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Second):
			}
		}
		p.metrics.parked.WithLabelValues(why).Inc()
		p.log.ErrorContext(logCtx, "record parked", attrs...)
		wm.ack(t, size)
	}()
}
