// Package sealed re-seals what a key ring sealed into Postgres columns with
// the ring's first key, and counts what each key id seals: the two halves
// of a key rotation (`sluice keys rotate`, `sluice keys status`).
//
// The stores own their tables: each describes its sealed columns as a
// Column (table, key id and ciphertext columns, the additional data bound
// to each value) and this package does the same work over every one.
//
// A rotation is safe against everything that may run beside it:
//   - readers (ingest, the deliverer) never wait: a row is replaced by one
//     UPDATE, so a reader sees the old ciphertext under the old key id or
//     the new under the new, each opened by a ring holding both keys;
//   - each batch is one short transaction that locks the rows it read (FOR
//     UPDATE SKIP LOCKED) and updates a row only if it still holds the key
//     id and ciphertext read, so a value an operator replaced meanwhile is
//     never overwritten with the old one re-sealed;
//   - two rotations at once share the rows (each skips the other's locked
//     batch), and neither re-seals a row twice;
//   - a rotation killed at any moment loses at most its open batch, rolled
//     back; the next run selects what is still sealed by another key than
//     the first, so it resumes where the last one stopped.
package sealed

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sluicehq/sluice/internal/keyring"
)

// Column is one place sealed values are stored: a table's key id and
// ciphertext columns. A row whose key id is NULL holds nothing sealed
// (optional values, such as an endpoint's headers).
type Column struct {
	// Kind names what the column holds, in reports ("source secrets").
	Kind string
	// Table, ID (its primary key), Owner (the column whose text the
	// additional data is made from; often ID), KeyID and Sealed are
	// identifiers of the schema, never input.
	Table, ID, Owner, KeyID, Sealed string
	// AD is the additional data a value was sealed with, from its owner.
	AD func(owner string) []byte
	// Audit, when set, records one batch re-sealed with key keyID in the
	// batch's transaction, so no re-sealed row goes unrecorded.
	Audit func(ctx context.Context, tx pgx.Tx, keyID string) error
}

// Options shape a rotation.
type Options struct {
	// BatchSize is how many rows one transaction re-seals. Default 100:
	// each batch holds its rows' locks for a few milliseconds, so an
	// operator's change to one of them waits no longer than that.
	BatchSize int
	// AfterBatch, when set, is told each committed batch (progress).
	AfterBatch func(Progress)
}

func (o Options) withDefaults() Options {
	if o.BatchSize <= 0 {
		o.BatchSize = 100
	}
	return o
}

// Progress is one committed batch of a rotation.
type Progress struct {
	Kind     string
	Resealed int // in this batch
	Total    int // by this rotation of the column so far
}

// Result is what a rotation did to one column, and what is left.
type Result struct {
	Kind string `json:"kind"`
	// Resealed is how many values this rotation re-sealed with the first
	// key (another rotation running at once re-seals the others).
	Resealed int `json:"resealed"`
	// Remaining counts, by key id, the values still sealed by another key
	// than the ring's first after the rotation: those the ring cannot
	// open, any sealed meanwhile by a process whose ring still puts an old
	// key first, and any another transaction held when it counted (another
	// rotation's open batch, an operator's change), never waited for.
	Remaining map[string]int `json:"remaining"`
	// Unopenable are the key ids of values the ring failed to open: keys
	// it lacks, or holds other bytes under.
	Unopenable []string `json:"unopenable"`
}

// maxPasses bounds the passes over a column: a second one takes the rows
// the first skipped while another transaction held them, and any sealed
// meanwhile with an old key; a process that keeps doing so would
// otherwise keep the rotation going forever.
const maxPasses = 3

// Rotate re-seals every value of col sealed by another key than ring's
// first, batch by batch, and reports what it did and what remains.
func Rotate(ctx context.Context, pool *pgxpool.Pool, ring *keyring.Ring, col Column, opts Options) (Result, error) {
	opts = opts.withDefaults()
	res := Result{Kind: col.Kind, Remaining: map[string]int{}}
	unopenable := map[string]bool{}
	for range maxPasses {
		n, err := col.pass(ctx, pool, ring, opts, unopenable, &res)
		if err != nil {
			return res, err
		}
		counts, err := Count(ctx, pool, col)
		if err != nil {
			return res, err
		}
		delete(counts, ring.Primary())
		res.Remaining = counts
		if n == 0 || len(counts) == 0 {
			break
		}
	}
	res.Unopenable = slices.Sorted(maps.Keys(unopenable))
	return res, nil
}

// row is one sealed value as read.
type row struct {
	id         any // the primary key as pgx scanned it, handed back as is
	owner      string
	keyID      string
	ciphertext []byte
}

// pass walks the column once in primary key order, a batch at a time;
// it returns how many values it re-sealed.
func (c Column) pass(ctx context.Context, pool *pgxpool.Pool, ring *keyring.Ring, opts Options, unopenable map[string]bool, res *Result) (int, error) {
	var (
		after any // nil: from the start
		done  int
	)
	for {
		n, last, err := c.batch(ctx, pool, ring, after, opts.BatchSize, unopenable)
		if err != nil {
			return done, fmt.Errorf("re-seal %s: %w", c.Kind, err)
		}
		if last == nil {
			return done, nil
		}
		after = last
		done += n
		res.Resealed += n
		if opts.AfterBatch != nil && n > 0 {
			opts.AfterBatch(Progress{Kind: c.Kind, Resealed: n, Total: res.Resealed})
		}
	}
}

// batch re-seals the next rows after after in one transaction; last is
// the last row's key (nil: none was left).
func (c Column) batch(ctx context.Context, pool *pgxpool.Pool, ring *keyring.Ring, after any, size int, unopenable map[string]bool) (resealed int, last any, err error) {
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, c.selectSQL(), ring.Primary(), after, size)
		if err != nil {
			return err
		}
		read, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (row, error) {
			var v row
			return v, r.Scan(&v.id, &v.owner, &v.keyID, &v.ciphertext)
		})
		if err != nil || len(read) == 0 {
			return err
		}
		last = read[len(read)-1].id
		batch := &pgx.Batch{}
		for _, v := range read {
			plain, err := ring.Open(v.keyID, v.ciphertext, c.AD(v.owner))
			if err != nil {
				unopenable[v.keyID] = true // a key the ring lacks, or other bytes under its id
				continue
			}
			keyID, sealed, err := ring.Seal(plain, c.AD(v.owner))
			if err != nil {
				return err
			}
			batch.Queue(c.updateSQL(), v.id, v.keyID, v.ciphertext, keyID, sealed)
		}
		if batch.Len() == 0 {
			return nil
		}
		if resealed, err = c.apply(ctx, tx, batch); err != nil || resealed == 0 || c.Audit == nil {
			return err
		}
		return c.Audit(ctx, tx, ring.Primary())
	})
	return resealed, last, err
}

// apply sends the batch's updates and counts the rows they changed.
func (c Column) apply(ctx context.Context, tx pgx.Tx, batch *pgx.Batch) (int, error) {
	results := tx.SendBatch(ctx, batch)
	n := 0
	for range batch.Len() {
		tag, err := results.Exec()
		if err != nil {
			results.Close()
			return 0, err
		}
		n += int(tag.RowsAffected())
	}
	return n, results.Close()
}

// Count returns how many values of col each key id seals.
func Count(ctx context.Context, db interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}, col Column) (map[string]int, error) {
	rows, err := db.Query(ctx, col.countSQL())
	if err != nil {
		return nil, fmt.Errorf("count %s by key: %w", col.Kind, err)
	}
	counts := map[string]int{}
	var (
		keyID string
		n     int
	)
	_, err = pgx.ForEachRow(rows, []any{&keyID, &n}, func() error {
		counts[keyID] = n
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("count %s by key: %w", col.Kind, err)
	}
	return counts, nil
}

// The statements, made of the column's identifiers. A row with a NULL key
// id fails `<>` and is never selected.

func (c Column) selectSQL() string {
	return fmt.Sprintf(`SELECT t.%[2]s, t.%[3]s::text, t.%[4]s, t.%[5]s FROM %[1]s t
WHERE t.%[4]s <> $1 AND (t.%[2]s > $2 OR $2 IS NULL)
ORDER BY t.%[2]s LIMIT $3
FOR UPDATE SKIP LOCKED`, c.ident(c.Table), c.ident(c.ID), c.ident(c.Owner), c.ident(c.KeyID), c.ident(c.Sealed))
}

func (c Column) updateSQL() string {
	return fmt.Sprintf(`UPDATE %[1]s SET %[3]s = $4, %[4]s = $5 WHERE %[2]s = $1 AND %[3]s = $2 AND %[4]s = $3`,
		c.ident(c.Table), c.ident(c.ID), c.ident(c.KeyID), c.ident(c.Sealed))
}

func (c Column) countSQL() string {
	return fmt.Sprintf(`SELECT %[2]s, count(*)::int FROM %[1]s WHERE %[2]s IS NOT NULL GROUP BY %[2]s ORDER BY %[2]s`,
		c.ident(c.Table), c.ident(c.KeyID))
}

func (Column) ident(name string) string { return pgx.Identifier{name}.Sanitize() }

// Unopenable returns the key ids of col that ring cannot open, trying one
// value sealed by each: an id the ring lacks, or holds other bytes under.
func Unopenable(ctx context.Context, db interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}, ring *keyring.Ring, col Column) ([]string, error) {
	rows, err := db.Query(ctx, col.probeSQL())
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", col.Kind, err)
	}
	var (
		failed       []string
		keyID, owner string
		ciphertext   []byte
	)
	_, err = pgx.ForEachRow(rows, []any{&keyID, &owner, &ciphertext}, func() error {
		if _, err := ring.Open(keyID, ciphertext, col.AD(owner)); err != nil {
			failed = append(failed, keyID)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", col.Kind, err)
	}
	return failed, nil
}

func (c Column) probeSQL() string {
	return fmt.Sprintf(`SELECT DISTINCT ON (%[2]s) %[2]s, %[3]s::text, %[4]s FROM %[1]s WHERE %[2]s IS NOT NULL ORDER BY %[2]s`,
		c.ident(c.Table), c.ident(c.KeyID), c.ident(c.Owner), c.ident(c.Sealed))
}
