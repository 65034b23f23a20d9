package ingest

import (
	"context"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
)

// maxCached bounds a cache: lookups of random keys (made-up source ids,
// wrong API keys) are remembered too, so a flood of them costs one query
// each at most once per TTL, but can never grow memory without end.
const maxCached = 50_000

// loadTimeout bounds one load from Postgres.
const loadTimeout = 5 * time.Second

// ttlCache remembers loaded values for a short time. Concurrent misses of one
// key share a single load, so an expiry under a flood is one query, not one
// per request.
type ttlCache[V any] struct {
	ttl  time.Duration
	load func(ctx context.Context, key string) (V, error)

	group singleflight.Group
	mu    sync.Mutex
	items map[string]cached[V]
}

type cached[V any] struct {
	v       V
	fetched time.Time
}

func newTTLCache[V any](ttl time.Duration, load func(ctx context.Context, key string) (V, error)) *ttlCache[V] {
	return &ttlCache[V]{ttl: ttl, load: load, items: map[string]cached[V]{}}
}

func (c *ttlCache[V]) get(ctx context.Context, key string) (V, error) {
	now := time.Now()
	c.mu.Lock()
	it, ok := c.items[key]
	c.mu.Unlock()
	if ok && now.Sub(it.fetched) <= c.ttl {
		return it.v, nil
	}
	v, err, _ := c.group.Do(key, func() (any, error) {
		// A load that finished since the check above is as good as ours.
		c.mu.Lock()
		it, ok := c.items[key]
		c.mu.Unlock()
		if ok && time.Since(it.fetched) <= c.ttl {
			return it.v, nil
		}
		// The load serves every waiter: one caller giving up must not fail
		// the others.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), loadTimeout)
		defer cancel()
		v, err := c.load(ctx, key)
		if err != nil {
			return v, err
		}
		c.put(key, v, now)
		return v, nil
	})
	if err != nil {
		var zero V
		return zero, err
	}
	return v.(V), nil
}

func (c *ttlCache[V]) put(key string, v V, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.items) >= maxCached {
		for k, it := range c.items {
			if now.Sub(it.fetched) > c.ttl {
				delete(c.items, k)
			}
		}
		// Still full of fresh entries: forget an arbitrary one.
		for k := range c.items {
			if len(c.items) < maxCached {
				break
			}
			delete(c.items, k)
		}
	}
	c.items[key] = cached[V]{v: v, fetched: now}
}
