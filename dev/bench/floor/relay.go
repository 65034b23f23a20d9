package floor

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/segmentio/encoding/json"
	"github.com/twmb/franz-go/pkg/kgo"
)

// RelayConfig is where the relay floor sends what it reads.
type RelayConfig struct {
	Brokers []string
	// TopicSuffix is appended to each row's topic, so the floor's records
	// do not reach the consumers of Sluice's.
	TopicSuffix string
}

// Relay reads pgoutput's stream as pg_recvlogical writes it (each message,
// then a newline) with the relay's options (proto_version 2, binary,
// messages), and sends every outbox row as the record Sluice's relay makes
// of it: the row's key, its headers plus the outbox and inbox ids, its
// payload, with acks=all and idempotence (franz-go's default), lingering as
// the relay does. It returns the records sent once Kafka acknowledged them
// all, at the end of the stream.
func Relay(ctx context.Context, in io.Reader, cfg RelayConfig) (int64, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(cfg.Brokers...), kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.ProducerLinger(20*time.Millisecond), kgo.ProducerBatchMaxBytes(256<<10), kgo.MaxBufferedRecords(1<<16),
		// The bench creates the floor's topics just before: a broker may
		// not host them for a moment yet.
		kgo.UnknownTopicRetries(-1))
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	var sent atomic.Int64
	var failed atomic.Value
	done := func(_ *kgo.Record, err error) {
		if err != nil {
			failed.CompareAndSwap(nil, err)
			return
		}
		sent.Add(1)
	}
	s := stream{r: bufio.NewReaderSize(in, 1<<20), relations: map[uint32]outboxColumns{}}
	for {
		rec, err := s.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return sent.Load(), err
		}
		if rec != nil {
			rec.Topic += cfg.TopicSuffix
			cl.Produce(ctx, rec, done)
		}
	}
	if err := cl.Flush(ctx); err != nil {
		return sent.Load(), err
	}
	if e, _ := failed.Load().(error); e != nil {
		return sent.Load(), e
	}
	return sent.Load(), nil
}

// outboxColumns are the positions of the outbox's columns in its tuples.
type outboxColumns struct{ id, topic, key, headers, payload, inboxID int }

type stream struct {
	r         *bufio.Reader
	relations map[uint32]outboxColumns
}

// next reads one message and its newline: a record for an outbox insert,
// nil for anything else.
func (s *stream) next() (*kgo.Record, error) {
	kind, err := s.r.ReadByte()
	if err != nil {
		return nil, err
	}
	var rec *kgo.Record
	switch kind {
	case 'B': // final LSN, commit time, xid
		err = s.skip(20)
	case 'C': // flags, commit LSN, end LSN, commit time
		err = s.skip(25)
	case 'O': // origin LSN, name
		if err = s.skip(8); err == nil {
			_, err = s.cstring()
		}
	case 'Y': // type oid, namespace, name
		if err = s.skip(4); err == nil {
			if _, err = s.cstring(); err == nil {
				_, err = s.cstring()
			}
		}
	case 'M': // flags, LSN, prefix, content
		if err = s.skip(9); err == nil {
			if _, err = s.cstring(); err == nil {
				var n uint32
				if n, err = s.uint32(); err == nil {
					err = s.skip(int(n))
				}
			}
		}
	case 'R':
		err = s.relation()
	case 'I':
		rec, err = s.insert()
	default:
		return nil, fmt.Errorf("pgoutput message %q not expected", kind)
	}
	if err != nil {
		return nil, fmt.Errorf("pgoutput message %q: %w", kind, err)
	}
	if nl, err := s.r.ReadByte(); err != nil || nl != '\n' {
		return nil, fmt.Errorf("pgoutput message %q: no newline after it", kind)
	}
	return rec, nil
}

func (s *stream) skip(n int) error {
	_, err := s.r.Discard(n)
	return err
}

func (s *stream) uint32() (uint32, error) {
	var b [4]byte
	_, err := io.ReadFull(s.r, b[:])
	return binary.BigEndian.Uint32(b[:]), err
}

func (s *stream) uint16() (uint16, error) {
	var b [2]byte
	_, err := io.ReadFull(s.r, b[:])
	return binary.BigEndian.Uint16(b[:]), err
}

func (s *stream) cstring() (string, error) {
	b, err := s.r.ReadBytes(0)
	if err != nil {
		return "", err
	}
	return string(b[:len(b)-1]), nil
}

// relation learns where the outbox's columns are.
func (s *stream) relation() error {
	id, err := s.uint32()
	if err != nil {
		return err
	}
	if _, err := s.cstring(); err != nil {
		return err
	}
	if _, err := s.cstring(); err != nil {
		return err
	}
	if err := s.skip(1); err != nil {
		return err
	}
	n, err := s.uint16()
	if err != nil {
		return err
	}
	cols := outboxColumns{-1, -1, -1, -1, -1, -1}
	for i := range int(n) {
		if err := s.skip(1); err != nil {
			return err
		}
		name, err := s.cstring()
		if err != nil {
			return err
		}
		if err := s.skip(8); err != nil {
			return err
		}
		for _, c := range []struct {
			name string
			at   *int
		}{{"id", &cols.id}, {"topic", &cols.topic}, {"key", &cols.key}, {"headers", &cols.headers}, {"payload", &cols.payload}, {"inbox_id", &cols.inboxID}} {
			if name == c.name {
				*c.at = i
			}
		}
	}
	s.relations[id] = cols
	return nil
}

// insert reads an outbox row (every column in binary) into its record.
func (s *stream) insert() (*kgo.Record, error) {
	id, err := s.uint32()
	if err != nil {
		return nil, err
	}
	cols, ok := s.relations[id]
	if !ok {
		return nil, fmt.Errorf("insert into relation %d before its description", id)
	}
	if err := s.skip(1); err != nil { // 'N'
		return nil, err
	}
	n, err := s.uint16()
	if err != nil {
		return nil, err
	}
	vals := make([][]byte, n)
	for i := range vals {
		kind, err := s.r.ReadByte()
		if err != nil {
			return nil, err
		}
		if kind != 'b' && kind != 't' {
			continue // NULL or unchanged
		}
		size, err := s.uint32()
		if err != nil {
			return nil, err
		}
		vals[i] = make([]byte, size)
		if _, err := io.ReadFull(s.r, vals[i]); err != nil {
			return nil, err
		}
	}
	return outboxRecord(cols, vals)
}

// outboxRecord is the record of an outbox row's binary values.
func outboxRecord(cols outboxColumns, vals [][]byte) (*kgo.Record, error) {
	if len(vals[cols.headers]) == 0 || vals[cols.headers][0] != 1 || len(vals[cols.id]) != 8 {
		return nil, errors.New("outbox row: unexpected binary headers or id")
	}
	headers, err := parseHeaders(vals[cols.headers][1:])
	if err != nil {
		return nil, err
	}
	headers = append(headers, kgo.RecordHeader{Key: "sluice_outboxid", Value: strconv.AppendInt(nil, int64(binary.BigEndian.Uint64(vals[cols.id])), 10)})
	if v := vals[cols.inboxID]; len(v) == 8 {
		headers = append(headers, kgo.RecordHeader{Key: "sluice_inboxid", Value: strconv.AppendInt(nil, int64(binary.BigEndian.Uint64(v)), 10)})
	}
	return &kgo.Record{Topic: string(vals[cols.topic]), Key: vals[cols.key], Value: vals[cols.payload], Headers: headers}, nil
}

// parseHeaders reads a flat JSON object of strings as jsonb prints it
// ({"k": "v", ...}); strings with escapes go through encoding/json.
func parseHeaders(src []byte) ([]kgo.RecordHeader, error) {
	out := make([]kgo.RecordHeader, 0, 16)
	i := 0
	str := func() ([]byte, bool) {
		for i < len(src) && src[i] != '"' {
			i++
		}
		start := i + 1
		for j := start; j < len(src); j++ {
			switch src[j] {
			case '\\':
				return nil, false
			case '"':
				i = j + 1
				return src[start:j], true
			}
		}
		return nil, false
	}
	for {
		for i < len(src) && src[i] != '"' && src[i] != '}' {
			i++
		}
		if i >= len(src) || src[i] == '}' {
			return out, nil
		}
		k, ok1 := str()
		v, ok2 := str()
		if !ok1 || !ok2 {
			return slowHeaders(src)
		}
		out = append(out, kgo.RecordHeader{Key: string(k), Value: v})
	}
}

func slowHeaders(src []byte) ([]kgo.RecordHeader, error) {
	var m map[string]string
	if err := json.Unmarshal(src, &m); err != nil {
		return nil, fmt.Errorf("outbox headers: %w", err)
	}
	out := make([]kgo.RecordHeader, 0, len(m))
	for k, v := range m {
		out = append(out, kgo.RecordHeader{Key: k, Value: []byte(v)})
	}
	return out, nil
}
