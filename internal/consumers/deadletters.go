package consumers

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/sluicehq/sluice/internal/envelope"
	"github.com/twmb/franz-go/pkg/kgo"
)

//go:embed sql/dead_letter.sql
var deadLetterSQL string

// Dead-letter headers, added to the original record's headers.
const (
	HeaderDLQTopic       = "sluice_dlq_topic"
	HeaderDLQPartition   = "sluice_dlq_partition"
	HeaderDLQOffset      = "sluice_dlq_offset"
	HeaderDLQGroup       = "sluice_dlq_group"
	HeaderDLQAttempts    = "sluice_dlq_attempts"
	HeaderDLQReason      = "sluice_dlq_reason"
	HeaderDLQFirstFailed = "sluice_dlq_first_failed_at"
	HeaderDLQLastFailed  = "sluice_dlq_last_failed_at"
)

var (
	//go:embed sql/dead_letter_get.sql
	deadLetterGetSQL string
	//go:embed sql/dead_letter_mark.sql
	deadLetterMarkSQL string
	//go:embed sql/dead_letter_issued.sql
	deadLetterIssuedSQL string
)

// ErrAlreadyReplayed: the dead letter was replayed before (or is being
// replayed by someone else right now).
var ErrAlreadyReplayed = errors.New("consumers: dead letter already replayed")

// ErrDeadLetterExpired: the dead letter's id was issued but the row is no
// longer kept: it was replayed and deleted past the payload horizon
// (internal/store/lifecycle), or erased with its tenant. Dead letters not
// replayed are never deleted.
var ErrDeadLetterExpired = errors.New("consumers: dead letter expired")

// deadLetterMissing says why id has no row: expired, or never issued.
func deadLetterMissing(ctx context.Context, pool *pgxpool.Pool, id int64) error {
	var issued bool
	if err := pool.QueryRow(ctx, deadLetterIssuedSQL, id).Scan(&issued); err != nil {
		return fmt.Errorf("load dead letter %d: %w", id, err)
	}
	if issued {
		return fmt.Errorf("dead letter %d was replayed and deleted past the payload horizon (or erased with its tenant): %w", id, ErrDeadLetterExpired)
	}
	return fmt.Errorf("dead letter %d does not exist", id)
}

// ReplayDeadLetter applies dead letter id again through its group's own
// idempotent handler (handlerOf finds it) and marks it replayed in the same
// transaction, through the worker's own protocol (applier): the effect and
// the mark commit together or not at all; Prepare runs before that
// transaction.
func ReplayDeadLetter(ctx context.Context, pool *pgxpool.Pool, id int64, handlerOf func(group string) (Handler, error)) error {
	var (
		letterGroup string
		r           kgo.Record
		headers     map[string]string
		replayedAt  *time.Time
	)
	err := pool.QueryRow(ctx, deadLetterGetSQL, id).Scan(&letterGroup, &r.Topic, &r.Partition, &r.Offset, &r.Key, &headers, &r.Value, &replayedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return deadLetterMissing(ctx, pool, id)
	}
	if err != nil {
		return fmt.Errorf("load dead letter %d: %w", id, err)
	}
	h, err := handlerOf(letterGroup)
	if err != nil {
		return fmt.Errorf("dead letter %d: %w", id, err)
	}
	if replayedAt != nil {
		return fmt.Errorf("dead letter %d at %s: %w", id, replayedAt.Format(time.RFC3339), ErrAlreadyReplayed)
	}
	r.Headers = envelope.RecordHeaders(headers)
	entries := parseEntries([]*kgo.Record{&r})
	if entries[0].fault != nil {
		return fmt.Errorf("dead letter %d: %w", id, entries[0].fault)
	}
	mark := func(ctx context.Context, tx pgx.Tx) error {
		var marked int64
		if err := tx.QueryRow(ctx, deadLetterMarkSQL, id).Scan(&marked); errors.Is(err, pgx.ErrNoRows) {
			return ErrAlreadyReplayed
		} else if err != nil {
			return fmt.Errorf("mark: %w", err)
		}
		return nil
	}
	if err := (applier{pool: pool, handler: h}).run(ctx, ctx, entries, true, mark); err != nil {
		return fmt.Errorf("replay dead letter %d: %w", id, err)
	}
	return nil
}

// writeDeadLetter keeps r, which failed for good, and publishes it to the
// group's dead-letter topic through the outbox.
func writeDeadLetter(ctx context.Context, tx pgx.Tx, group, topic string, r *kgo.Record, f *failure) error {
	headers := envelope.HeaderMap(r.Headers)
	// The outbox row names the record across its copies; the original
	// envelope travels on without it, since it would name the wrong row.
	var outboxID *int64
	if id, err := strconv.ParseInt(headers[envelope.HeaderOutboxID], 10, 64); err == nil {
		outboxID = &id
	}
	delete(headers, envelope.HeaderOutboxID)
	original := envelope.OutboxHeaders(headers)
	headers[HeaderDLQTopic] = r.Topic
	headers[HeaderDLQPartition] = strconv.Itoa(int(r.Partition))
	headers[HeaderDLQOffset] = strconv.FormatInt(r.Offset, 10)
	headers[HeaderDLQGroup] = group
	headers[HeaderDLQAttempts] = strconv.Itoa(f.attempts)
	headers[HeaderDLQReason] = f.reason
	headers[HeaderDLQFirstFailed] = f.first.UTC().Format(time.RFC3339Nano)
	headers[HeaderDLQLastFailed] = f.last.UTC().Format(time.RFC3339Nano)
	dlqHeaders := envelope.OutboxHeaders(headers)
	_, err := tx.Exec(ctx, deadLetterSQL, group, r.Topic, r.Partition, r.Offset, r.Key, original, r.Value,
		f.reason, f.attempts, f.first, f.last, topic, dlqHeaders, outboxID)
	if err != nil {
		return fmt.Errorf("write dead letter: %w", err)
	}
	return nil
}
