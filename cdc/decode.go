package cdc

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pglogrepl"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicehq/sluice/internal/envelope"
)

// outboxColumns is where each outbox column sits in a relation's tuples.
// pgoutput announces a relation before its first row and again after any
// schema change, so positions are learnt, never assumed.
type outboxColumns struct {
	id, topic, key, headers, payload, inboxID int
}

func learnColumns(rel *pglogrepl.RelationMessage) (outboxColumns, error) {
	c := outboxColumns{-1, -1, -1, -1, -1, -1}
	for i, col := range rel.Columns {
		switch col.Name {
		case "id":
			c.id = i
		case "topic":
			c.topic = i
		case "key":
			c.key = i
		case "headers":
			c.headers = i
		case "payload":
			c.payload = i
		case "inbox_id":
			c.inboxID = i
		}
	}
	if slices.Contains([]int{c.id, c.topic, c.key, c.headers, c.payload, c.inboxID}, -1) {
		return c, fmt.Errorf("relation %s.%s lacks an outbox column", rel.Namespace, rel.RelationName)
	}
	return c, nil
}

// record turns one outbox row, as pgoutput sends it in text format, into
// the Kafka record it stands for.
func (c outboxColumns) record(tuple *pglogrepl.TupleData) (*kgo.Record, error) {
	cols := tuple.Columns
	if len(cols) <= max(c.id, c.topic, c.key, c.headers, c.payload, c.inboxID) {
		return nil, fmt.Errorf("outbox tuple has %d columns", len(cols))
	}
	text := func(i int) (string, bool) {
		if cols[i].DataType != pglogrepl.TupleDataTypeText {
			return "", false
		}
		return string(cols[i].Data), true
	}
	id, _ := text(c.id)
	topic, ok := text(c.topic)
	if !ok || topic == "" {
		return nil, fmt.Errorf("outbox row %s has no topic", id)
	}
	keyText, _ := text(c.key)
	key, err := decodeBytea(keyText)
	if err != nil {
		return nil, fmt.Errorf("outbox row %s key: %w", id, err)
	}
	headersText, _ := text(c.headers)
	var headers map[string]string
	if err := json.Unmarshal([]byte(headersText), &headers); err != nil {
		return nil, fmt.Errorf("outbox row %s headers: %w", id, err)
	}
	headers[envelope.HeaderOutboxID] = id
	inboxID, hasInbox := text(c.inboxID)
	if hasInbox {
		headers[envelope.HeaderInboxID] = inboxID
	}
	var value []byte
	if payloadText, ok := text(c.payload); ok {
		if value, err = decodeBytea(payloadText); err != nil {
			return nil, fmt.Errorf("outbox row %s payload: %w", id, err)
		}
	} else if hasInbox {
		headers[envelope.HeaderClaim] = "inbox/" + inboxID
	}

	rec := &kgo.Record{Topic: topic, Key: key, Value: value, Headers: make([]kgo.RecordHeader, 0, len(headers))}
	for k, v := range headers {
		rec.Headers = append(rec.Headers, kgo.RecordHeader{Key: k, Value: []byte(v)})
	}
	slices.SortFunc(rec.Headers, func(a, b kgo.RecordHeader) int { return strings.Compare(a.Key, b.Key) })
	return rec, nil
}

// decodeBytea reads bytea's text output (hex format, the default since 9.0).
func decodeBytea(s string) ([]byte, error) {
	hexPart, ok := strings.CutPrefix(s, `\x`)
	if !ok {
		return nil, fmt.Errorf("bytea not in hex format")
	}
	return hex.DecodeString(hexPart)
}
