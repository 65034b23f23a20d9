package cdc

import (
	"bytes"
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

// outboxRow is one outbox row, however it was read (the stream or the table).
type outboxRow struct {
	id, topic  string
	key        []byte
	headers    []byte // JSON object of strings
	payload    []byte
	hasPayload bool
	inboxID    string
	hasInbox   bool
}

// record turns one outbox row, as pgoutput sends it in text format, into
// the Kafka record it stands for.
func (c outboxColumns) record(tuple *pglogrepl.TupleData) (*kgo.Record, error) {
	cols := tuple.Columns
	if len(cols) <= max(c.id, c.topic, c.key, c.headers, c.payload, c.inboxID) {
		return nil, fmt.Errorf("outbox tuple has %d columns", len(cols))
	}
	text := func(i int) ([]byte, bool) {
		if cols[i].DataType != pglogrepl.TupleDataTypeText {
			return nil, false
		}
		return cols[i].Data, true
	}
	var row outboxRow
	id, _ := text(c.id)
	topic, _ := text(c.topic)
	row.id, row.topic = string(id), string(topic)
	keyText, _ := text(c.key)
	var err error
	if row.key, err = decodeBytea(keyText); err != nil {
		return nil, fmt.Errorf("outbox row %s key: %w", row.id, err)
	}
	row.headers, _ = text(c.headers)
	var payloadText []byte
	if payloadText, row.hasPayload = text(c.payload); row.hasPayload {
		if row.payload, err = decodeBytea(payloadText); err != nil {
			return nil, fmt.Errorf("outbox row %s payload: %w", row.id, err)
		}
	}
	var inboxID []byte
	inboxID, row.hasInbox = text(c.inboxID)
	row.inboxID = string(inboxID)
	return row.record()
}

// record is the Kafka record the row stands for: the key and value as
// stored, the stored headers plus the outbox and inbox ids, sorted by name.
func (row outboxRow) record() (*kgo.Record, error) {
	if row.topic == "" {
		return nil, fmt.Errorf("outbox row %s has no topic", row.id)
	}
	var headers map[string]string
	if err := json.Unmarshal(row.headers, &headers); err != nil {
		return nil, fmt.Errorf("outbox row %s headers: %w", row.id, err)
	}
	if headers == nil {
		headers = map[string]string{}
	}
	headers[envelope.HeaderOutboxID] = row.id
	if row.hasInbox {
		headers[envelope.HeaderInboxID] = row.inboxID
	}
	var value []byte
	if row.hasPayload {
		value = row.payload
	} else if row.hasInbox {
		headers[envelope.HeaderClaim] = "inbox/" + row.inboxID
	}
	rec := &kgo.Record{Topic: row.topic, Key: row.key, Value: value, Headers: make([]kgo.RecordHeader, 0, len(headers))}
	for k, v := range headers {
		rec.Headers = append(rec.Headers, kgo.RecordHeader{Key: k, Value: []byte(v)})
	}
	slices.SortFunc(rec.Headers, func(a, b kgo.RecordHeader) int { return strings.Compare(a.Key, b.Key) })
	return rec, nil
}

// decodeBytea reads bytea's text output (hex format, the default since 9.0).
func decodeBytea(s []byte) ([]byte, error) {
	hexPart, ok := bytes.CutPrefix(s, []byte(`\x`))
	if !ok {
		return nil, fmt.Errorf("bytea not in hex format")
	}
	out := make([]byte, hex.DecodedLen(len(hexPart)))
	_, err := hex.Decode(out, hexPart)
	return out, err
}
