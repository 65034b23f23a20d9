package effect

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/sluicehq/sluice/internal/pg"
)

// Counter is a column many records add to, on rows they share: a
// workspace's balance written by each of its invoices, a product's stock
// by each order line. Updated by each record as it comes, two batches of
// different partitions would lock such rows in different orders and
// deadlock, and hold them for the whole batch. Added to with Tx.Add, a
// Counter's changes are netted per key over the batch and written once,
// when the batch settles, in key order: batches wait for each other's rows
// but never deadlock, and hold them only from there to the commit.
//
// Make one per column, at start (NewCounter), and share it: it remembers
// rows found locked elsewhere.
type Counter struct {
	name, apply, free string

	mu        sync.Mutex
	suspected map[string]time.Time // key -> since when
}

// NewCounter is a Counter written by apply, a statement taking a batch's
// net changes as $1 the keys (text[], in ascending order), $2 each key's
// change (bigint[]) and $3 each key's tenant (text[]); it must write the
// rows in the order given, e.g.
//
//	INSERT INTO stock AS s (sku, tenant_id, available)
//	SELECT k, t::uuid, d FROM unnest($1::text[], $2::bigint[], $3::text[]) AS c(k, d, t) ORDER BY k
//	ON CONFLICT (sku) DO UPDATE SET available = s.available + EXCLUDED.available
//
// free, optional, takes $1 keys (text[]) and returns the keys whose rows
// it can lock without waiting (FOR UPDATE SKIP LOCKED) or that have no row
// yet. With it, after a batch waited out its lock timeout on a row held
// elsewhere (an operator's UPDATE, a long report), the next batches ask
// first and set aside only the records of the keys still locked (Blocked),
// instead of failing whole batches for one lock timeout each. name
// identifies the statements, prepared once per connection.
func NewCounter(name, apply, free string) *Counter {
	return &Counter{name: name, apply: apply, free: free, suspected: map[string]time.Time{}}
}

// forgetSuspect: a suspicion no batch checked for this long is dropped; a
// row still locked then costs one more lock timeout.
const forgetSuspect = 10 * time.Minute

func (c *Counter) suspect(keys []string) {
	if c.free == "" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	for _, k := range keys {
		if _, ok := c.suspected[k]; !ok {
			c.suspected[k] = now
		}
	}
}

func (c *Counter) suspectsAmong(keys []string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	now := time.Now()
	for _, k := range keys {
		since, ok := c.suspected[k]
		switch {
		case !ok:
		case now.Sub(since) > forgetSuspect:
			delete(c.suspected, k)
		default:
			out = append(out, k)
		}
	}
	return out
}

func (c *Counter) forget(keys []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, k := range keys {
		delete(c.suspected, k)
	}
}

// counterBatch is one batch's changes to a Counter.
type counterBatch struct {
	c      *Counter
	deltas map[string]*counterDelta
	keys   []string  // sorted, once queued
	params pg.Params // the statement's, kept until the batch was sent
}

// counterDelta is a key's net change and the records that make it: they
// wait together if its row is locked elsewhere.
type counterDelta struct {
	tenant string
	delta  int64
	recs   []Record
}

func (b *counterBatch) add(rec Record, key string, delta int64) {
	d := b.deltas[key]
	if d == nil {
		d = &counterDelta{tenant: rec.TenantID}
		b.deltas[key] = d
	}
	d.delta += delta
	d.recs = append(d.recs, rec)
}

// blocked fails the batch, naming the records that wait, when a key it
// moves was suspected of being locked elsewhere and still is; a suspect
// found free is forgotten.
func (b *counterBatch) blocked(ctx context.Context, tx pgx.Tx) error {
	b.keys = slices.Sorted(maps.Keys(b.deltas))
	if b.c.free == "" {
		return nil
	}
	suspects := b.c.suspectsAmong(b.keys)
	if len(suspects) == 0 {
		return nil
	}
	locked, err := b.c.lockedNow(ctx, tx, suspects)
	if err != nil {
		return err
	}
	b.c.forget(slices.DeleteFunc(slices.Clone(suspects), func(k string) bool { return slices.Contains(locked, k) }))
	if len(locked) == 0 {
		return nil
	}
	b.c.suspect(locked)
	var recs []Record
	for _, k := range locked {
		recs = append(recs, b.deltas[k].recs...)
	}
	return Blocked(fmt.Errorf("%s rows %s locked by another transaction", b.c.name, strings.Join(locked, ", ")), recs...)
}

// lockedNow says which of keys are locked by another transaction now,
// without waiting, and leaves tx holding none of them.
func (c *Counter) lockedNow(ctx context.Context, tx pgx.Tx, keys []string) ([]string, error) {
	if _, err := tx.Exec(ctx, "SAVEPOINT sluice_effect_counter"); err != nil {
		return nil, fmt.Errorf("ask which %s rows are locked: %w", c.name, err)
	}
	rows, err := tx.Query(ctx, c.free, keys)
	if err != nil {
		return nil, fmt.Errorf("ask which %s rows are locked: %w", c.name, err)
	}
	free := map[string]bool{}
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			rows.Close()
			return nil, fmt.Errorf("ask which %s rows are locked: %w", c.name, err)
		}
		free[k] = true
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("ask which %s rows are locked: %w", c.name, err)
	}
	// The rows it locked are released: the settle takes them in key
	// order, like every other batch.
	if _, err := tx.Exec(ctx, "ROLLBACK TO SAVEPOINT sluice_effect_counter"); err != nil {
		return nil, fmt.Errorf("ask which %s rows are locked: %w", c.name, err)
	}
	var locked []string
	for _, k := range keys {
		if !free[k] {
			locked = append(locked, k)
		}
	}
	return locked, nil
}

// queue adds the batch's net changes, in key order, to q; its parameters
// stay in b until q was sent.
func (b *counterBatch) queue(ctx context.Context, tx pgx.Tx, q *pgconn.Batch) error {
	deltas, tenants := make([]int64, len(b.keys)), make([]string, len(b.keys))
	for i, k := range b.keys {
		deltas[i], tenants[i] = b.deltas[k].delta, b.deltas[k].tenant
	}
	b.params.Reset()
	b.params.Text(b.keys)
	b.params.Int8(deltas)
	b.params.Text(tenants)
	if err := pg.QueuePrepared(ctx, tx, q, "sluice_effect_counter_"+b.c.name, b.c.apply, &b.params); err != nil {
		return fmt.Errorf("write %s: %w", b.c.name, err)
	}
	return nil
}
