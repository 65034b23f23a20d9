package cdc

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicehq/sluice/internal/refusal"
)

var (
	//go:embed sql/parked_list.sql
	parkedListSQL string
	//go:embed sql/parked_release.sql
	parkedReleaseSQL string
	//go:embed sql/parked_issued.sql
	parkedIssuedSQL string
	//go:embed sql/parked_pending.sql
	parkedPendingSQL string
)

// Parked is a cdc_parked row, without its payload.
type Parked struct {
	ID         int64      `json:"id"`
	ParkedAt   time.Time  `json:"parked_at"`
	Slot       string     `json:"slot"`
	LSN        string     `json:"lsn"`
	Topic      string     `json:"topic"`
	EventID    string     `json:"event_id"`
	OutboxID   string     `json:"outbox_id"`
	Reason     string     `json:"reason"`
	ReleasedAt *time.Time `json:"released_at,omitempty"`
}

// ListParked returns up to limit parked records, newest first; released
// ones only when withReleased.
func ListParked(ctx context.Context, pool *pgxpool.Pool, withReleased bool, limit int) ([]Parked, error) {
	rows, err := pool.Query(ctx, parkedListSQL, withReleased, limit)
	if err != nil {
		return nil, fmt.Errorf("list parked records: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Parked, error) {
		var p Parked
		err := r.Scan(&p.ID, &p.ParkedAt, &p.Slot, &p.LSN, &p.Topic, &p.EventID, &p.OutboxID, &p.Reason, &p.ReleasedAt)
		return p, err
	})
	if err != nil {
		return nil, fmt.Errorf("list parked records: %w", err)
	}
	return out, nil
}

// ErrAlreadyReleased: the parked record was released before.
var ErrAlreadyReleased = refusal.Sub(refusal.Conflict, "already_released", "cdc: parked record already released")

// ErrParkedExpired: the parked record was released and deleted past the
// payload horizon (internal/store/lifecycle); its id was issued, it is not
// kept.
var ErrParkedExpired = refusal.Sub(refusal.Conflict, "parked_expired", "cdc: parked record expired")

// ReleaseParked marks parked record id handled (re-published by a resync,
// or judged not needed), so the lifecycle manager may delete it once the
// payload horizon has passed; until then it stays listed with --released.
func ReleaseParked(ctx context.Context, pool *pgxpool.Pool, id int64) error {
	var got int64
	err := pool.QueryRow(ctx, parkedReleaseSQL, id).Scan(&got)
	if err == nil {
		return nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("release parked record %d: %w", id, err)
	}
	return notPending(ctx, pool, id)
}

// notPending says why parked record id, not found pending, is not.
func notPending(ctx context.Context, pool *pgxpool.Pool, id int64) error {
	var exists, issued bool
	if err := pool.QueryRow(ctx, parkedIssuedSQL, id).Scan(&exists, &issued); err != nil {
		return fmt.Errorf("look up parked record %d: %w", id, err)
	}
	switch {
	case exists:
		return fmt.Errorf("parked record %d: %w", id, ErrAlreadyReleased)
	case issued:
		return fmt.Errorf("parked record %d was released and deleted past the payload horizon: %w", id, ErrParkedExpired)
	default:
		return refusal.New(refusal.NotFound, "parked record %d does not exist", id)
	}
}

// ParkedSelection names the parked records to publish: one by ID, or every
// pending one of Topic.
type ParkedSelection struct {
	ID    int64
	Topic string
}

// ErrTopicMissing: the parked records' topic still does not exist.
var ErrTopicMissing = refusal.Sub(refusal.Conflict, "topic_missing", "cdc: topic does not exist")

// PublishParked publishes the pending parked records sel names, oldest
// first (the order they were read off the slot), each acknowledged by Kafka
// before it is released, and returns their ids. It stops at the first that
// fails; the ones after it stay pending. A record published and then not
// released (the release failed) is published again by the next run: a
// duplicate, which consumers absorb. The topic must exist: a record parked
// for its topic's absence is not parked again here.
func PublishParked(ctx context.Context, pool *pgxpool.Pool, kafkaOpts []kgo.Opt, sel ParkedSelection) ([]int64, error) {
	rows, err := pool.Query(ctx, parkedPendingSQL, sel.ID, sel.Topic)
	if err != nil {
		return nil, fmt.Errorf("read parked records: %w", err)
	}
	pending, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (parkedRecord, error) {
		var p parkedRecord
		err := r.Scan(&p.id, &p.topic, &p.key, &p.headers, &p.payload)
		return p, err
	})
	if err != nil {
		return nil, fmt.Errorf("read parked records: %w", err)
	}
	if len(pending) == 0 && sel.ID > 0 {
		return nil, notPending(ctx, pool, sel.ID)
	}
	published := []int64{}
	if len(pending) == 0 {
		return published, nil
	}
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.RequiredAcks(kgo.AllISRAcks()), kgo.UnknownTopicRetries(2)}, kafkaOpts...)...)
	if err != nil {
		return published, fmt.Errorf("kafka producer: %w", err)
	}
	defer cl.Close()
	for _, p := range pending {
		if err := p.publish(ctx, pool, cl); err != nil {
			return published, err
		}
		published = append(published, p.id)
	}
	return published, nil
}

// parkedRecord is a pending cdc_parked row with what Kafka needs.
type parkedRecord struct {
	id      int64
	topic   *string
	key     []byte
	headers map[string]string
	payload []byte
}

func (p parkedRecord) publish(ctx context.Context, pool *pgxpool.Pool, cl *kgo.Client) error {
	if p.topic == nil {
		return fmt.Errorf("parked record %d: its outbox row could not be read, there is no record to publish (release it once handled)", p.id)
	}
	rec := &kgo.Record{Topic: *p.topic, Key: p.key, Value: p.payload}
	for _, k := range slices.Sorted(maps.Keys(p.headers)) {
		rec.Headers = append(rec.Headers, kgo.RecordHeader{Key: k, Value: []byte(p.headers[k])})
	}
	if err := cl.ProduceSync(ctx, rec).FirstErr(); err != nil {
		if isMissingTopic(err) {
			err = fmt.Errorf("%w: %s (create it first): %w", ErrTopicMissing, *p.topic, err)
		}
		return fmt.Errorf("publish parked record %d: %w", p.id, err)
	}
	if _, err := pool.Exec(ctx, parkedReleaseSQL, p.id); err != nil {
		return fmt.Errorf("parked record %d published, not released (publishing it again is harmless): %w", p.id, err)
	}
	return nil
}
