package pg

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
)

// Params encodes a statement's parameters, one-dimensional arrays and a few
// scalars, in PostgreSQL's binary format, into one buffer kept from one
// statement to the next. pgx's own encoding boxes every array element in an
// interface and starts each statement's buffers small again, so a group
// commit carrying many bodies would grow them anew on every statement; here
// they grow once and stay (Trim bounds what stays). The bytes are the ones
// pgx writes for the same Go values (a test holds them to it).
type Params struct {
	buf   []byte
	ends  []int // where each parameter ends in buf; a negative end is NULL
	vals  [][]byte
	forms []int16
	room  reservation
}

// Reset forgets the parameters, keeping the buffers.
func (p *Params) Reset() {
	p.buf, p.ends = p.buf[:0], p.ends[:0]
}

// Grow makes room for n more bytes of parameters: a caller that knows what
// its statement's arrays hold grows the buffer once, where each array grew
// it (and copied what the earlier ones wrote) in turn.
func (p *Params) Grow(n int) { p.buf = slices.Grow(p.buf, n) }

// Trim drops the buffer when it grew past max bytes: a statement that
// carried a few large bodies need not keep their room for every later one.
func (p *Params) Trim(max int) {
	if cap(p.buf) > max {
		p.buf = nil
	}
}

// Values returns the parameters for pgconn's ExecPrepared, and their
// formats (all binary); both are valid until the next Reset.
func (p *Params) Values() ([][]byte, []int16) {
	p.vals, p.forms = p.vals[:0], p.forms[:0]
	start := 0
	for _, end := range p.ends {
		if end < 0 {
			p.vals = append(p.vals, nil)
		} else {
			p.vals = append(p.vals, p.buf[start:end:end])
			start = end
		}
		p.forms = append(p.forms, pgtype.BinaryFormatCode)
	}
	return p.vals, p.forms
}

func (p *Params) end() { p.ends = append(p.ends, len(p.buf)) }

// sumLen is the total length of vals.
func sumLen[S ~string | ~[]byte](vals []S) int {
	n := 0
	for _, v := range vals {
		n += len(v)
	}
	return n
}

// array writes an array header for n elements of type oid and makes room
// for them, size bytes of values besides their lengths; the caller appends
// the elements and calls p.end. nullAt is where the has-null flag is, for a
// caller that finds a NULL element. Grown element by element, a consumer's
// statement of a few MiB went through dozens of ever larger buffers.
func (p *Params) array(oid uint32, n, size int) (nullAt int) {
	p.buf = slices.Grow(p.buf, 20+4*n+size)
	p.buf = binary.BigEndian.AppendUint32(p.buf, 1) // dimensions
	nullAt = len(p.buf)
	p.buf = binary.BigEndian.AppendUint32(p.buf, 0)
	p.buf = binary.BigEndian.AppendUint32(p.buf, oid)
	p.buf = binary.BigEndian.AppendUint32(p.buf, uint32(n))
	p.buf = binary.BigEndian.AppendUint32(p.buf, 1) // lower bound
	return nullAt
}

// element appends one element.
func (p *Params) element(b []byte) {
	p.buf = binary.BigEndian.AppendUint32(p.buf, uint32(len(b)))
	p.buf = append(p.buf, b...)
}

func (p *Params) null(nullAt int) {
	p.buf = binary.BigEndian.AppendUint32(p.buf, 0xFFFFFFFF)
	binary.BigEndian.PutUint32(p.buf[nullAt:], 1)
}

// Text adds a text[].
func (p *Params) Text(vals []string) {
	p.array(pgtype.TextOID, len(vals), sumLen(vals))
	for _, v := range vals {
		p.buf = binary.BigEndian.AppendUint32(p.buf, uint32(len(v)))
		p.buf = append(p.buf, v...)
	}
	p.end()
}

// TextBytes adds a text[] of texts held as bytes (nil is empty text).
func (p *Params) TextBytes(vals [][]byte) {
	p.array(pgtype.TextOID, len(vals), sumLen(vals))
	for _, v := range vals {
		p.element(v)
	}
	p.end()
}

// TextEach adds a text[] of n elements, element i appended to the buffer
// by each(i, buf): texts built for the statement need no buffer of their
// own.
func (p *Params) TextEach(n int, each func(i int, buf []byte) []byte) {
	p.array(pgtype.TextOID, n, 0) // what each appends is not known beforehand
	for i := range n {
		at := len(p.buf)
		p.buf = each(i, binary.BigEndian.AppendUint32(p.buf, 0))
		binary.BigEndian.PutUint32(p.buf[at:], uint32(len(p.buf)-at-4))
	}
	p.end()
}

// NullText adds a text[] whose nil elements are NULL.
func (p *Params) NullText(vals []*string) {
	size := 0
	for _, v := range vals {
		if v != nil {
			size += len(*v)
		}
	}
	nullAt := p.array(pgtype.TextOID, len(vals), size)
	for _, v := range vals {
		if v == nil {
			p.null(nullAt)
			continue
		}
		p.buf = binary.BigEndian.AppendUint32(p.buf, uint32(len(*v)))
		p.buf = append(p.buf, *v...)
	}
	p.end()
}

// Bytea adds a bytea[] whose nil elements are NULL.
func (p *Params) Bytea(vals [][]byte) {
	nullAt := p.array(pgtype.ByteaOID, len(vals), sumLen(vals))
	for _, v := range vals {
		if v == nil {
			p.null(nullAt)
			continue
		}
		p.element(v)
	}
	p.end()
}

// UUID adds a uuid[] of UUIDs in their text form.
func (p *Params) UUID(vals []string) error {
	p.array(pgtype.UUIDOID, len(vals), 16*len(vals))
	for _, v := range vals {
		u, err := parseUUID(v)
		if err != nil {
			return fmt.Errorf("uuid %q: %w", v, err)
		}
		p.element(u[:])
	}
	p.end()
	return nil
}

// Timestamptz adds a timestamptz[].
func (p *Params) Timestamptz(vals []time.Time) {
	p.array(pgtype.TimestamptzOID, len(vals), 8*len(vals))
	for _, t := range vals {
		p.buf = binary.BigEndian.AppendUint32(p.buf, 8)
		p.buf = binary.BigEndian.AppendUint64(p.buf, uint64(sinceY2K(t)))
	}
	p.end()
}

// NullTimestamptz adds a timestamptz[] whose nil elements are NULL.
func (p *Params) NullTimestamptz(vals []*time.Time) {
	nullAt := p.array(pgtype.TimestamptzOID, len(vals), 8*len(vals))
	for _, t := range vals {
		if t == nil {
			p.null(nullAt)
			continue
		}
		p.buf = binary.BigEndian.AppendUint32(p.buf, 8)
		p.buf = binary.BigEndian.AppendUint64(p.buf, uint64(sinceY2K(*t)))
	}
	p.end()
}

// sinceY2K is t as PostgreSQL stores a timestamptz: microseconds since
// 2000-01-01 UTC, truncated as pgx truncates.
func sinceY2K(t time.Time) int64 {
	const unixToY2K = 946_684_800 * 1_000_000
	return t.Unix()*1_000_000 + int64(t.Nanosecond())/1000 - unixToY2K
}

// Bool adds a bool[].
func (p *Params) Bool(vals []bool) {
	p.array(pgtype.BoolOID, len(vals), len(vals))
	for _, v := range vals {
		b := byte(0)
		if v {
			b = 1
		}
		p.buf = append(binary.BigEndian.AppendUint32(p.buf, 1), b)
	}
	p.end()
}

// Int4 adds an int4[].
func (p *Params) Int4(vals []int32) {
	p.array(pgtype.Int4OID, len(vals), 4*len(vals))
	for _, v := range vals {
		p.buf = binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(p.buf, 4), uint32(v))
	}
	p.end()
}

// NullInt8 adds an int8[] whose nil elements are NULL.
func (p *Params) NullInt8(vals []*int64) {
	nullAt := p.array(pgtype.Int8OID, len(vals), 8*len(vals))
	for _, v := range vals {
		if v == nil {
			p.null(nullAt)
			continue
		}
		p.buf = binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint32(p.buf, 8), uint64(*v))
	}
	p.end()
}

// JSONB adds a jsonb[] of JSON documents (each written as jsonb's binary
// form: a version byte, then the text).
func (p *Params) JSONB(vals [][]byte) {
	p.array(pgtype.JSONBOID, len(vals), len(vals)+sumLen(vals))
	for _, v := range vals {
		p.buf = binary.BigEndian.AppendUint32(p.buf, uint32(len(v)+1))
		p.buf = append(append(p.buf, 1), v...)
	}
	p.end()
}

// Int8 adds an int8[].
func (p *Params) Int8(vals []int64) {
	p.array(pgtype.Int8OID, len(vals), 8*len(vals))
	for _, v := range vals {
		p.buf = binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint32(p.buf, 8), uint64(v))
	}
	p.end()
}

// TextScalar adds a text.
func (p *Params) TextScalar(v string) {
	p.buf = append(p.buf, v...)
	p.end()
}

// Int8Scalar adds an int8.
func (p *Params) Int8Scalar(v int64) {
	p.buf = binary.BigEndian.AppendUint64(p.buf, uint64(v))
	p.end()
}

// BoolScalar adds a bool.
func (p *Params) BoolScalar(v bool) {
	b := byte(0)
	if v {
		b = 1
	}
	p.buf = append(p.buf, b)
	p.end()
}

// binaryResults asks for every result column in binary (one format code
// applies to all).
var binaryResults = []int16{pgtype.BinaryFormatCode}

// Prepare prepares sql on tx's connection under name (a round trip the first
// time on each connection, none after) and returns the statement's name.
func Prepare(ctx context.Context, tx pgx.Tx, name, sql string) (string, error) {
	sd, err := tx.Conn().Prepare(ctx, name, sql)
	if err != nil {
		return "", err
	}
	return sd.Name, nil
}

// ExecPrepared runs sql, prepared on tx's connection under name, with p's
// parameters; the result's columns come in binary. The caller reads the
// result to its end and closes it before tx runs anything else.
func ExecPrepared(ctx context.Context, tx pgx.Tx, name, sql string, p *Params) (*pgconn.ResultReader, error) {
	stmt, err := Prepare(ctx, tx, name, sql)
	if err != nil {
		return nil, err
	}
	return p.Exec(ctx, tx.Conn().PgConn(), stmt, binaryResults), nil
}

// Exec runs the prepared statement stmt on conn with p's parameters, the
// result's columns in resultFormats.
func (p *Params) Exec(ctx context.Context, conn *pgconn.PgConn, stmt string, resultFormats []int16) *pgconn.ResultReader {
	values, formats := p.Values()
	// The frontend starts every message after one over 1 KiB from a new
	// 1 KiB buffer and grows it as it appends: a group commit's Bind of
	// tens of KiB went through a chain of buffers, about one for each
	// parameter. Grown once to the size the Bind takes (its parameters,
	// their lengths, names and formats), it is one allocation.
	p.room = reservation(len(p.buf) + 6*len(values) + len(stmt) + 64)
	conn.Frontend().Send(&p.room) // a pointer into p: an int in an interface is allocated
	return conn.ExecPrepared(ctx, stmt, values, formats, resultFormats)
}

// reservation is a message of no bytes that leaves room for n more in the
// buffer it is appended to.
type reservation int

func (r *reservation) Encode(dst []byte) ([]byte, error) { return slices.Grow(dst, int(*r)), nil }

func (*reservation) Decode([]byte) error { return errors.New("a reservation is never received") }

func (*reservation) Frontend() {}

// QueuePrepared adds sql, prepared on tx's connection under name, with p's
// parameters to b; p must not change until b was sent.
func QueuePrepared(ctx context.Context, tx pgx.Tx, b *pgconn.Batch, name, sql string, p *Params) error {
	stmt, err := Prepare(ctx, tx, name, sql)
	if err != nil {
		return err
	}
	values, formats := p.Values()
	b.ExecPrepared(stmt, values, formats, binaryResults)
	return nil
}
