package cdc

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/jackc/pglogrepl"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicehq/sluice/internal/envelope"
)

// outboxColumns is where each outbox column sits in a relation's tuples,
// and the type of those whose binary form depends on it. pgoutput announces
// a relation before its first row and again after any schema change, so
// positions are learnt, never assumed.
type outboxColumns struct {
	id, topic, key, headers, payload, inboxID int
	idType, headersType, inboxIDType          uint32
}

// Type OIDs the binary decoding knows.
const (
	oidInt4  = 23
	oidInt8  = 20
	oidJSONB = 3802
)

func learnColumns(rel *pglogrepl.RelationMessage) (outboxColumns, error) {
	c := outboxColumns{id: -1, topic: -1, key: -1, headers: -1, payload: -1, inboxID: -1}
	for i, col := range rel.Columns {
		switch col.Name {
		case "id":
			c.id, c.idType = i, col.DataType
		case "topic":
			c.topic = i
		case "key":
			c.key = i
		case "headers":
			c.headers, c.headersType = i, col.DataType
		case "payload":
			c.payload = i
		case "inbox_id":
			c.inboxID, c.inboxIDType = i, col.DataType
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

// record turns one outbox row, as pgoutput sends it (binary or text
// format), into the Kafka record it stands for. The record keeps references
// into cols.
func (c outboxColumns) record(cols []tupleColumn) (*kgo.Record, error) {
	if len(cols) <= max(c.id, c.topic, c.key, c.headers, c.payload, c.inboxID) {
		return nil, fmt.Errorf("outbox tuple has %d columns", len(cols))
	}
	var (
		row outboxRow
		err error
	)
	row.id, _, err = integerText(cols[c.id], c.idType)
	if err != nil {
		return nil, fmt.Errorf("outbox row id: %w", err)
	}
	if cols[c.topic].present() {
		row.topic = string(cols[c.topic].data)
	}
	if row.key, _, err = byteaValue(cols[c.key]); err != nil {
		return nil, fmt.Errorf("outbox row %s key: %w", row.id, err)
	}
	row.headers = cols[c.headers].data
	if cols[c.headers].kind == pglogrepl.TupleDataTypeBinary && c.headersType == oidJSONB {
		// jsonb's binary form is a version byte, then the text.
		if len(row.headers) == 0 || row.headers[0] != 1 {
			return nil, fmt.Errorf("outbox row %s headers: unknown jsonb version", row.id)
		}
		row.headers = row.headers[1:]
	}
	if row.payload, row.hasPayload, err = byteaValue(cols[c.payload]); err != nil {
		return nil, fmt.Errorf("outbox row %s payload: %w", row.id, err)
	}
	if row.inboxID, row.hasInbox, err = integerText(cols[c.inboxID], c.inboxIDType); err != nil {
		return nil, fmt.Errorf("outbox row %s inbox id: %w", row.id, err)
	}
	return row.record()
}

// integerText is an integer column in decimal; false when NULL.
func integerText(col tupleColumn, typ uint32) (string, bool, error) {
	switch {
	case col.kind == pglogrepl.TupleDataTypeText:
		return string(col.data), true, nil
	case col.kind != pglogrepl.TupleDataTypeBinary:
		return "", false, nil
	case typ == oidInt8 && len(col.data) == 8:
		return strconv.FormatInt(int64(binary.BigEndian.Uint64(col.data)), 10), true, nil
	case typ == oidInt4 && len(col.data) == 4:
		return strconv.FormatInt(int64(int32(binary.BigEndian.Uint32(col.data))), 10), true, nil
	}
	return "", false, fmt.Errorf("binary integer of type %d and %d bytes", typ, len(col.data))
}

// byteaValue is a bytea column's bytes; false when NULL.
func byteaValue(col tupleColumn) ([]byte, bool, error) {
	switch col.kind {
	case pglogrepl.TupleDataTypeBinary:
		return col.data, true, nil
	case pglogrepl.TupleDataTypeText:
		b, err := decodeBytea(col.data)
		return b, true, err
	}
	return nil, false, nil
}

// record is the Kafka record the row stands for: the key and value as
// stored, the stored headers (in jsonb's order) plus the outbox and inbox
// ids. It keeps references into the row's byte slices.
func (row outboxRow) record() (*kgo.Record, error) {
	if row.topic == "" {
		return nil, fmt.Errorf("outbox row %s has no topic", row.id)
	}
	headers, err := parseHeaders(row.headers, make([]kgo.RecordHeader, 0, 16))
	if err != nil {
		return nil, fmt.Errorf("outbox row %s headers: %w", row.id, err)
	}
	set := func(k, v string) {
		headers = slices.DeleteFunc(headers, func(h kgo.RecordHeader) bool { return h.Key == k })
		headers = append(headers, kgo.RecordHeader{Key: k, Value: []byte(v)})
	}
	set(envelope.HeaderOutboxID, row.id)
	if row.hasInbox {
		set(envelope.HeaderInboxID, row.inboxID)
	}
	var value []byte
	if row.hasPayload {
		value = row.payload
	} else if row.hasInbox {
		set(envelope.HeaderClaim, "inbox/"+row.inboxID)
	}
	return &kgo.Record{Topic: row.topic, Key: row.key, Value: value, Headers: headers}, nil
}

// parseHeaders reads a flat JSON object of strings, as jsonb prints it,
// appending to dst. Values without escapes point into src instead of being
// copied; anything unusual is left to encoding/json.
func parseHeaders(src []byte, dst []kgo.RecordHeader) ([]kgo.RecordHeader, error) {
	i := skipSpace(src, 0)
	if i >= len(src) || src[i] != '{' {
		return slowHeaders(src, dst)
	}
	i = skipSpace(src, i+1)
	if i < len(src) && src[i] == '}' {
		return dst, nil
	}
	for {
		key, next, ok := jsonString(src, i)
		if !ok {
			return slowHeaders(src, dst)
		}
		i = skipSpace(src, next)
		if i >= len(src) || src[i] != ':' {
			return slowHeaders(src, dst)
		}
		value, next, ok := jsonString(src, skipSpace(src, i+1))
		if !ok {
			return slowHeaders(src, dst)
		}
		dst = append(dst, kgo.RecordHeader{Key: envelope.HeaderKey(key), Value: value})
		i = skipSpace(src, next)
		if i >= len(src) {
			return slowHeaders(src, dst)
		}
		switch src[i] {
		case ',':
			i = skipSpace(src, i+1)
		case '}':
			return dst, nil
		default:
			return slowHeaders(src, dst)
		}
	}
}

// jsonString reads a string without escapes starting at src[i].
func jsonString(src []byte, i int) (s []byte, next int, ok bool) {
	if i >= len(src) || src[i] != '"' {
		return nil, 0, false
	}
	end := bytes.IndexByte(src[i+1:], '"')
	if end < 0 {
		return nil, 0, false
	}
	s = src[i+1 : i+1+end]
	if bytes.IndexByte(s, '\\') >= 0 {
		return nil, 0, false
	}
	return s, i + end + 2, true
}

func skipSpace(src []byte, i int) int {
	for i < len(src) && (src[i] == ' ' || src[i] == '\n' || src[i] == '\t' || src[i] == '\r') {
		i++
	}
	return i
}

// slowHeaders is the general path: encoding/json, keys sorted.
func slowHeaders(src []byte, dst []kgo.RecordHeader) ([]kgo.RecordHeader, error) {
	var m map[string]string
	if err := json.Unmarshal(src, &m); err != nil {
		return nil, err
	}
	return envelope.RecordHeaders(m), nil
}

// decodeBytea reads bytea's text output (hex format, the default since 9.0).
func decodeBytea(s []byte) ([]byte, error) {
	hexPart, ok := bytes.CutPrefix(s, []byte(`\x`))
	if !ok {
		return nil, fmt.Errorf("bytea not in hex format")
	}
	// In place: each output byte is written behind the two it comes from.
	n, err := hex.Decode(hexPart, hexPart)
	return hexPart[:n], err
}

// tupleColumn is one column of a tuple: its kind ('t' text, 'n' null,
// 'u' unchanged toast, 'b' binary) and its bytes.
type tupleColumn struct {
	kind byte
	data []byte
}

func (c tupleColumn) present() bool {
	return c.kind == pglogrepl.TupleDataTypeText || c.kind == pglogrepl.TupleDataTypeBinary
}

// parseInsert decodes a pgoutput Insert message ('I', relation id, 'N',
// tuple). It is the hot path: one copy of the message, columns point into
// it, where pglogrepl copies every column byte by byte.
func parseInsert(msg []byte) (relation uint32, cols []tupleColumn, err error) {
	if len(msg) < 8 || msg[0] != 'I' || msg[5] != 'N' {
		return 0, nil, errors.New("malformed insert message")
	}
	relation = binary.BigEndian.Uint32(msg[1:5])
	buf := bytes.Clone(msg[8:])
	n := int(binary.BigEndian.Uint16(msg[6:8]))
	cols = make([]tupleColumn, n)
	for i := range cols {
		if len(buf) < 1 {
			return 0, nil, errors.New("insert message ends early")
		}
		cols[i].kind = buf[0]
		buf = buf[1:]
		if cols[i].kind != pglogrepl.TupleDataTypeText && cols[i].kind != pglogrepl.TupleDataTypeBinary {
			continue
		}
		if len(buf) < 4 {
			return 0, nil, errors.New("insert message ends early")
		}
		size := int(binary.BigEndian.Uint32(buf))
		if size < 0 || len(buf) < 4+size {
			return 0, nil, errors.New("insert message ends early")
		}
		cols[i].data = buf[4 : 4+size : 4+size]
		buf = buf[4+size:]
	}
	return relation, cols, nil
}
