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
// batch handler's many intents cost one round trip. Its parameters are
// encoded into p (internal/pg.Params: pgx's arrays box every element).
func WriteIntents(ctx context.Context, tx pgx.Tx, p *pg.Params, intents []Intent) error {
	if len(intents) == 0 {
		return nil
	}
	encodeIntents(p, intents)
	rr, err := pg.ExecPrepared(ctx, tx, intentsStatement, intentsSQL, p)
	if err == nil {
		_, err = rr.Close()
	}
	if err != nil {
		return fmt.Errorf("write intents: %w", err)
	}
	return nil
}

// QueueIntents is WriteIntents's statement added to b, for a handler that
// sends it together with its other last statements in one round trip; p
// must not change until b was sent.
func QueueIntents(ctx context.Context, tx pgx.Tx, b *pgconn.Batch, p *pg.Params, intents []Intent) error {
	if len(intents) == 0 {
		return nil
	}
	encodeIntents(p, intents)
	if err := pg.QueuePrepared(ctx, tx, b, intentsStatement, intentsSQL, p); err != nil {
		return fmt.Errorf("write intents: %w", err)
	}
	return nil
}

// intentsStatement names sql/intents.sql prepared on a connection.
const intentsStatement = "sluice_consumers_intents"

func encodeIntents(p *pg.Params, intents []Intent) {
	topics, keys := make([]string, len(intents)), make([][]byte, len(intents))
	headers, payloads := make([][]byte, len(intents)), make([][]byte, len(intents))
	size := 0
	for i, in := range intents {
		topics[i], keys[i], headers[i], payloads[i] = in.Topic, in.Key, in.Headers, in.Payload
		size += len(in.Topic) + len(in.Key) + len(in.Headers) + len(in.Payload)
	}
	p.Reset()
	// The four arrays' headers (20 bytes each), each element's length and
	// jsonb version byte (4 + 4 + 5 + 4): one growth for the statement.
	p.Grow(4*20 + 17*len(intents) + size)
	p.Text(topics)
	p.Bytea(keys)
	p.JSONB(headers)
	p.Bytea(payloads)
}
