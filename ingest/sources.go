package ingest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sluicehq/sluice/internal/keyring"
)

// errUnknownSource covers both a source that does not exist and one that is
// disabled: the caller learns nothing about which.
var errUnknownSource = errors.New("unknown or disabled source")

// source is a verified sender: everything ingest trusts about a request comes
// from here, never from the payload.
type source struct {
	ID       string
	TenantID string
	Kind     string
	Account  string
	Disabled bool
	Secrets  [][]byte
}

// sources reads sources from Postgres and keeps them briefly, so a burst of
// deliveries costs one query per source. A disabled or rotated source takes
// effect within the cache TTL.
type sources struct {
	pool *pgxpool.Pool
	ring *keyring.Ring
	ttl  time.Duration

	mu    sync.Mutex
	cache map[string]cachedSource
}

type cachedSource struct {
	src     *source // nil: known not to exist
	fetched time.Time
}

func newSources(pool *pgxpool.Pool, ring *keyring.Ring, ttl time.Duration) *sources {
	return &sources{pool: pool, ring: ring, ttl: ttl, cache: map[string]cachedSource{}}
}

func (s *sources) get(ctx context.Context, id string) (*source, error) {
	now := time.Now()
	s.mu.Lock()
	c, ok := s.cache[id]
	s.mu.Unlock()
	if !ok || now.Sub(c.fetched) > s.ttl {
		src, err := s.load(ctx, id)
		if err != nil {
			return nil, err
		}
		c = cachedSource{src: src, fetched: now}
		s.mu.Lock()
		s.cache[id] = c
		s.mu.Unlock()
	}
	if c.src == nil || c.src.Disabled {
		return nil, errUnknownSource
	}
	return c.src, nil
}

func (s *sources) load(ctx context.Context, id string) (*source, error) {
	rows, err := s.pool.Query(ctx, sourceSQL, id)
	if err != nil {
		return nil, fmt.Errorf("load source: %w", err)
	}
	defer rows.Close()
	var src *source
	for rows.Next() {
		var (
			tenantID, kind, account string
			disabled                bool
			keyID                   *string
			ciphertext              []byte
		)
		if err := rows.Scan(&tenantID, &kind, &account, &disabled, &keyID, &ciphertext); err != nil {
			return nil, fmt.Errorf("load source: %w", err)
		}
		if src == nil {
			src = &source{ID: id, TenantID: tenantID, Kind: kind, Account: account, Disabled: disabled}
		}
		if keyID == nil {
			continue
		}
		secret, err := s.ring.Open(*keyID, ciphertext, []byte(id))
		if err != nil {
			return nil, fmt.Errorf("source %s: %w", id, err)
		}
		src.Secrets = append(src.Secrets, secret)
	}
	if err := rows.Err(); err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("load source: %w", err)
	}
	return src, nil
}
