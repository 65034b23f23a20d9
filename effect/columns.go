package effect

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/sluicehq/sluice/internal/pg"
)

// Statement is a statement a set-based handler runs once per batch with
// column arrays (unnest($1::text[], ...)): prepared once per connection
// under Name, planned like any other.
type Statement struct {
	Name string
	SQL  string
}

// Columns are a statement's parameters: a batch's column arrays (and a few
// scalars) encoded in Postgres's binary format into one buffer that grows
// once and is kept from batch to batch. pgx's own encoding boxes every
// array element and grows its buffers anew for each statement, which a
// batch of thousands of records pays for. Give each statement in flight
// its own Columns, and keep them between batches (a sync.Pool); Reset
// before each use. The zero value is ready.
type Columns struct{ p pg.Params }

// Reset empties c for the next statement, keeping its buffer.
func (c *Columns) Reset() { c.p.Reset() }

// Trim drops a buffer grown past max bytes (a batch of large values), so
// what is kept between batches stays bounded.
func (c *Columns) Trim(max int) { c.p.Trim(max) }

// Text adds a text[] parameter.
func (c *Columns) Text(v []string) { c.p.Text(v) }

// UUID adds a uuid[] parameter from uuids in their text form.
func (c *Columns) UUID(v []string) error { return c.p.UUID(v) }

// Int8 adds a bigint[] parameter.
func (c *Columns) Int8(v []int64) { c.p.Int8(v) }

// Int4 adds an int[] parameter.
func (c *Columns) Int4(v []int32) { c.p.Int4(v) }

// NullInt8 adds a bigint[] parameter whose nil elements are NULL.
func (c *Columns) NullInt8(v []*int64) { c.p.NullInt8(v) }

// Bytea adds a bytea[] parameter.
func (c *Columns) Bytea(v [][]byte) { c.p.Bytea(v) }

// JSONB adds a jsonb[] parameter of JSON documents.
func (c *Columns) JSONB(v [][]byte) { c.p.JSONB(v) }

// Timestamptz adds a timestamptz[] parameter.
func (c *Columns) Timestamptz(v []time.Time) { c.p.Timestamptz(v) }

// Bool adds a boolean[] parameter.
func (c *Columns) Bool(v []bool) { c.p.Bool(v) }

// TextScalar adds a text parameter.
func (c *Columns) TextScalar(v string) { c.p.TextScalar(v) }

// Int8Scalar adds a bigint parameter.
func (c *Columns) Int8Scalar(v int64) { c.p.Int8Scalar(v) }

// Run runs s with c's parameters in the transaction and returns its
// result, every column in binary; read it to its end and close it before
// the transaction runs anything else.
func (tx *Tx) Run(ctx context.Context, s Statement, c *Columns) (*pgconn.ResultReader, error) {
	return pg.ExecPrepared(ctx, tx.Tx, s.Name, s.SQL, &c.p)
}

// Queue adds s with c's parameters to b, for a handler that sends several
// statements in one round trip (tx.Conn().PgConn().ExecBatch); c must not
// change until b was sent.
func (tx *Tx) Queue(ctx context.Context, b *pgconn.Batch, s Statement, c *Columns) error {
	return pg.QueuePrepared(ctx, tx.Tx, b, s.Name, s.SQL, &c.p)
}
