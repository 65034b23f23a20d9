package consumers

import (
	"context"
	_ "embed"
	"fmt"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/segmentio/encoding/json"

	"github.com/sluicehq/sluice/internal/envelope"
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
// objectType, caused by rec. payload is marshalled to JSON.
func NewIntent(topic string, rec Record, ceType, idempotencyKey, objectType, subject string, payload any) Intent {
	ev := rec.Event
	key := envelope.Key(ev.TenantID, objectType, subject)
	body, _ := json.Marshal(payload)
	headers := appendHeaders(make([]byte, 0, 640), envelope.Event{
		ID: idempotencyKey, Source: envelope.SourceURI(ev.TenantID, ev.SourceID), Type: ceType,
		Subject: subject, TenantID: ev.TenantID, SourceAccount: ev.SourceAccount, PartitionKey: key,
		ContentType: "application/json", TraceParent: ev.TraceParent,
	}.Headers())
	return Intent{Topic: topic, Key: []byte(key), Headers: headers, Payload: body}
}

// WriteIntents writes intents to the outbox in order, with one statement: a
// batch handler's many intents cost one round trip.
func WriteIntents(ctx context.Context, tx pgx.Tx, intents []Intent) error {
	if len(intents) == 0 {
		return nil
	}
	topics, keys := make([]string, len(intents)), make([][]byte, len(intents))
	headers, payloads := make([][]byte, len(intents)), make([][]byte, len(intents))
	for i, in := range intents {
		topics[i], keys[i], headers[i], payloads[i] = in.Topic, in.Key, in.Headers, in.Payload
	}
	if _, err := tx.Exec(ctx, intentsSQL, topics, keys, headers, payloads); err != nil {
		return fmt.Errorf("write intents: %w", err)
	}
	return nil
}

// appendHeaders appends headers as a JSON object. The outbox stores them as
// jsonb, so key order and spacing do not matter; what matters is that a
// batch's intents are cheap to build (json.Marshal sorts a map's keys and
// reflects on every value).
func appendHeaders(b []byte, headers map[string]string) []byte {
	b = append(b, '{')
	first := true
	for k, v := range headers {
		if !first {
			b = append(b, ',')
		}
		first = false
		b = appendJSONString(b, k)
		b = append(b, ':')
		b = appendJSONString(b, v)
	}
	return append(b, '}')
}

// appendJSONString appends s as a JSON string; anything but printable ASCII
// without quotes or backslashes takes encoding/json's path.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' {
			quoted, _ := json.Marshal(s)
			return append(b, quoted...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
