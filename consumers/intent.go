package consumers

import (
	"context"
	_ "embed"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/segmentio/encoding/json"

	"github.com/sluicehq/sluice/internal/envelope"
	"github.com/sluicehq/sluice/internal/pg"
)

//go:embed sql/intents.sql
var intentsSQL string

// Intent is a second-hop message (an e-mail, an alert) written as an outbox
// row in the same transaction as the effect that caused it, so it exists
// exactly when the effect does. Its ce_id is the idempotency key the
// dispatcher sends with it.
type Intent struct {
	Topic   string
	Key     []byte
	Headers []byte // JSON object, as the outbox stores it
	Payload []byte
}

// NewIntent builds the outbox row of an intent about object subject of
// objectType, caused by rec. payload is marshalled to JSON. The intent
// continues the trace of the span in ctx (the effect that caused it, see
// Record.StartEffect), or, when there is none, rec's.
func NewIntent(ctx context.Context, topic string, rec Record, ceType, idempotencyKey, objectType, subject string, payload any) Intent {
	ev := rec.Event
	traceParent := envelope.TraceParentOf(ctx)
	if traceParent == "" {
		traceParent = ev.TraceParent
	}
	key := envelope.Key(ev.TenantID, objectType, subject)
	body, _ := json.Marshal(payload)
	headers := envelope.Event{
		ID: idempotencyKey, Source: envelope.SourceURI(ev.TenantID, ev.SourceID), Type: ceType,
		Subject: subject, TenantID: ev.TenantID, SourceAccount: ev.SourceAccount, PartitionKey: key,
		ContentType: "application/json", TraceParent: traceParent,
	}.OutboxHeaders()
	return Intent{Topic: topic, Key: []byte(key), Headers: headers, Payload: body}
}

// WriteIntents writes intents to the outbox in order, with one statement: a
// batch handler's many intents cost one round trip.
func WriteIntents(ctx context.Context, tx pgx.Tx, intents []Intent) error {
	if len(intents) == 0 {
		return nil
	}
	if _, err := tx.Exec(ctx, intentsSQL, intentArgs(intents)...); err != nil {
		return fmt.Errorf("write intents: %w", err)
	}
	return nil
}

// QueueIntents is WriteIntents's statement added to b, for a handler that
// sends it together with its other last statements in one round trip.
func QueueIntents(b *pgx.Batch, intents []Intent) {
	if len(intents) > 0 {
		b.Queue(intentsSQL, intentArgs(intents)...)
	}
}

// QueuePreparedIntents is QueueIntents for a handler that sends its last
// statements through pgconn (see credits' Settle): the statement prepared on
// tx's connection, its parameters encoded into p, which must not change
// until b was sent.
func QueuePreparedIntents(ctx context.Context, tx pgx.Tx, b *pgconn.Batch, p *pg.Params, intents []Intent) error {
	if len(intents) == 0 {
		return nil
	}
	topics, keys := make([]string, len(intents)), make([][]byte, len(intents))
	headers, payloads := make([][]byte, len(intents)), make([][]byte, len(intents))
	for i, in := range intents {
		topics[i], keys[i], headers[i], payloads[i] = in.Topic, in.Key, in.Headers, in.Payload
	}
	p.Reset()
	p.Text(topics)
	p.Bytea(keys)
	p.JSONB(headers)
	p.Bytea(payloads)
	if err := pg.QueuePrepared(ctx, tx, b, "sluice_consumers_intents", intentsSQL, p); err != nil {
		return fmt.Errorf("write intents: %w", err)
	}
	return nil
}

func intentArgs(intents []Intent) []any {
	topics, keys := make([]string, len(intents)), make([][]byte, len(intents))
	headers, payloads := make([][]byte, len(intents)), make([][]byte, len(intents))
	for i, in := range intents {
		topics[i], keys[i], headers[i], payloads[i] = in.Topic, in.Key, in.Headers, in.Payload
	}
	return []any{topics, keys, headers, payloads}
}
