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
	suspected map[row]time.Time // since when
}

// row is a Counter's row: a key of a tenant.
type row struct{ key, tenant string }

func compareRows(a, b row) int {
	if c := strings.Compare(a.key, b.key); c != 0 {
		return c
	}
	return strings.Compare(a.tenant, b.tenant)
}

// NewCounter is a Counter written by apply, a statement taking a batch's
// net changes per row, a row being a key of a tenant: $1 the keys (text[]),
// $2 each row's change (bigint[]) and $3 each row's tenant (text[]), in
// ascending order of key then tenant; it must write the rows in the order
// given, e.g.
//
//	INSERT INTO stock AS s (tenant_id, sku, available)
//	SELECT t::uuid, k, d FROM unnest($1::text[], $2::bigint[], $3::text[]) WITH ORDINALITY AS c(k, d, t, n)
//	ORDER BY n
//	ON CONFLICT (tenant_id, sku) DO UPDATE SET available = s.available + EXCLUDED.available
//
// free, optional, takes $1 keys and $2 their tenants (text[] each) and
// returns, as (key, tenant), the rows it can lock without waiting (FOR
// UPDATE SKIP LOCKED) or that do not exist yet. With it, after a batch waited out its lock timeout on a row held
// elsewhere (an operator's UPDATE, a long report), the next batches ask
// first and set aside only the records of the keys still locked (Blocked),
// instead of failing whole batches for one lock timeout each. name
// identifies the statements, prepared once per connection.
func NewCounter(name, apply, free string) *Counter {
	return &Counter{name: name, apply: apply, free: free, suspected: map[row]time.Time{}}
}

// forgetSuspect: a suspicion no batch checked for this long is dropped; a
// row still locked then costs one more lock timeout.
const forgetSuspect = 10 * time.Minute

func (c *Counter) suspect(keys []row) {
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

func (c *Counter) suspectsAmong(keys []row) []row {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []row
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

func (c *Counter) forget(keys []row) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, k := range keys {
		delete(c.suspected, k)
	}
}

// counterBatch is one batch's changes to a Counter.
type counterBatch struct {
	c      *Counter
	deltas map[row]*counterDelta
	keys   []row     // sorted, once queued
	params pg.Params // the statement's, kept until the batch was sent
}

// counterDelta is a key's net change and the records that make it: they
// wait together if its row is locked elsewhere.
type counterDelta struct {
	delta int64
	recs  []Record
}

func (b *counterBatch) add(rec Record, key string, delta int64) {
	r := row{key: key, tenant: rec.TenantID}
	d := b.deltas[r]
	if d == nil {
		d = &counterDelta{}
		b.deltas[r] = d
	}
	d.delta += delta
	d.recs = append(d.recs, rec)
}

// blocked fails the batch, naming the records that wait, when a key it
// moves was suspected of being locked elsewhere and still is; a suspect
// found free is forgotten.
func (b *counterBatch) blocked(ctx context.Context, tx pgx.Tx) error {
	b.keys = slices.SortedFunc(maps.Keys(b.deltas), compareRows)
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
	b.c.forget(slices.DeleteFunc(slices.Clone(suspects), func(k row) bool { return slices.Contains(locked, k) }))
	if len(locked) == 0 {
		return nil
	}
	b.c.suspect(locked)
	var recs []Record
	names := make([]string, len(locked))
	for i, k := range locked {
		recs = append(recs, b.deltas[k].recs...)
		names[i] = k.key
	}
	return Blocked(fmt.Errorf("%s rows %s locked by another transaction", b.c.name, strings.Join(names, ", ")), recs...)
}

// lockedNow says which of keys are locked by another transaction now,
// without waiting, and leaves tx holding none of them.
func (c *Counter) lockedNow(ctx context.Context, tx pgx.Tx, keys []row) ([]row, error) {
	if _, err := tx.Exec(ctx, "SAVEPOINT sluice_effect_counter"); err != nil {
		return nil, fmt.Errorf("ask which %s rows are locked: %w", c.name, err)
	}
	ks, ts := make([]string, len(keys)), make([]string, len(keys))
	for i, k := range keys {
		ks[i], ts[i] = k.key, k.tenant
	}
	rows, err := tx.Query(ctx, c.free, ks, ts)
	if err != nil {
		return nil, fmt.Errorf("ask which %s rows are locked: %w", c.name, err)
	}
	free := map[row]bool{}
	for rows.Next() {
		var k row
		if err := rows.Scan(&k.key, &k.tenant); err != nil {
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
	var locked []row
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
	keys, deltas, tenants := make([]string, len(b.keys)), make([]int64, len(b.keys)), make([]string, len(b.keys))
	for i, k := range b.keys {
		keys[i], deltas[i], tenants[i] = k.key, b.deltas[k].delta, k.tenant
	}
	b.params.Reset()
	b.params.Text(keys)
	b.params.Int8(deltas)
	b.params.Text(tenants)
	if err := pg.QueuePrepared(ctx, tx, q, "sluice_effect_counter_"+b.c.name, b.c.apply, &b.params); err != nil {
		return fmt.Errorf("write %s: %w", b.c.name, err)
	}
	return nil
}
