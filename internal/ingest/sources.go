package ingest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/netip"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sluicehq/sluice/internal/keyring"
	"github.com/sluicehq/sluice/internal/provider"
)

// errUnknownSource covers both a source that does not exist and one that is
// disabled: the caller learns nothing about which.
var errUnknownSource = errors.New("unknown or disabled source")

// errSealed: a secret of the source cannot be opened with this process's key
// ring. Every delivery to the source fails until an operator fixes the ring.
var errSealed = errors.New("source secret cannot be opened with the key ring")

// source is a verified sender: everything ingest trusts about a request comes
// from here, never from the payload.
type source struct {
	ID       string
	TenantID string
	Kind     provider.Kind
	Account  string
	Disabled bool
	Secrets  [][]byte
	// MaxBody caps the body: the source's own limit or the kind's default.
	MaxBody int64
	// Allow lists the networks deliveries may come from; empty allows any.
	Allow []netip.Prefix
	// Limits is the tenant's own rate (tenant_limits), read with the
	// source so a change arrives within the cache TTL; nil: the instance's.
	Limits *Override
	// Scheme authenticates and reads the source's deliveries, with its
	// settings applied. Its Verifier is nil for a kind the registry does
	// not hold (the api kind among them): such a source takes no webhook.
	Scheme provider.Scheme
}

// allows reports whether a client address may deliver for the source.
func (s *source) allows(ip netip.Addr) bool {
	if len(s.Allow) == 0 {
		return true
	}
	for _, p := range s.Allow {
		if p.Contains(ip.Unmap()) {
			return true
		}
	}
	return false
}

// sourceDefaults are the instance settings a source falls back to.
type sourceDefaults struct {
	Tolerance    time.Duration
	MaxBodyBytes int64
}

// sources reads sources from Postgres and keeps them briefly, so a burst of
// deliveries costs one query per source. A disabled or rotated source takes
// effect within the cache TTL.
type sources struct {
	pool      *pgxpool.Pool
	ring      *keyring.Ring
	providers *provider.Registry
	defaults  sourceDefaults
	cache     *ttlCache[*source] // nil value: known not to exist
}

func newSources(pool *pgxpool.Pool, ring *keyring.Ring, providers *provider.Registry, ttl time.Duration, defaults sourceDefaults) *sources {
	s := &sources{pool: pool, ring: ring, providers: providers, defaults: defaults}
	s.cache = newTTLCache(ttl, s.load)
	return s
}

// get returns an enabled source, or errUnknownSource.
func (s *sources) get(ctx context.Context, id string) (*source, error) {
	src, err := s.cache.get(ctx, id)
	if err != nil {
		return nil, err
	}
	if src == nil || src.Disabled {
		return nil, errUnknownSource
	}
	return src, nil
}

// storedSource is a source's row: what its kind's provider needs to open
// it, beside what ingest reads directly.
type storedSource struct {
	tolerance *int32
	maxBody   *int64
	settings  []byte
}

// load reads a source and opens its secrets and its provider's scheme.
func (s *sources) load(ctx context.Context, id string) (*source, error) {
	src, stored, err := s.read(ctx, id)
	if err != nil || src == nil {
		return nil, err
	}
	if err := s.open(src, stored); err != nil {
		return nil, fmt.Errorf("source %s: %w", id, err)
	}
	return src, nil
}

// read reads a source's row and its active secrets, decrypted; nil when
// there is no such source.
func (s *sources) read(ctx context.Context, id string) (*source, storedSource, error) {
	var (
		src    *source
		stored storedSource
		allow  []netip.Prefix
	)
	rows, err := s.pool.Query(ctx, sourceSQL, id)
	if err != nil {
		return nil, stored, fmt.Errorf("load source: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			tenantID, kind, account string
			disabled                bool
			rate                    *float64
			burst                   *int
			keyID                   *string
			ciphertext              []byte
		)
		if err := rows.Scan(&tenantID, &kind, &account, &disabled, &stored.tolerance, &stored.maxBody, &stored.settings, &allow,
			&rate, &burst, &keyID, &ciphertext); err != nil {
			return nil, stored, fmt.Errorf("load source: %w", err)
		}
		if src == nil {
			src = &source{ID: id, TenantID: tenantID, Kind: provider.Kind(kind), Account: account, Disabled: disabled, Allow: allow,
				Limits: override(rate, burst)}
		}
		if keyID == nil {
			continue
		}
		secret, err := s.ring.Open(*keyID, ciphertext, []byte(id))
		if err != nil {
			return nil, stored, fmt.Errorf("source %s: %w: %w", id, errSealed, err)
		}
		src.Secrets = append(src.Secrets, secret)
	}
	if err := rows.Err(); err != nil {
		return nil, stored, fmt.Errorf("load source: %w", err)
	}
	return src, stored, nil
}

// open applies the source's settings through its kind's provider, and its
// limits over the kind's and the instance's defaults.
func (s *sources) open(src *source, stored storedSource) error {
	tol := s.defaults.Tolerance
	if stored.tolerance != nil {
		tol = time.Duration(*stored.tolerance) * time.Second
	}
	if p, ok := s.providers.Get(src.Kind); ok {
		scheme, err := p.Open(stored.settings, tol)
		if err != nil {
			return err
		}
		src.Scheme = scheme
	}
	src.MaxBody = cmp.Or(src.Scheme.MaxBody, s.defaults.MaxBodyBytes)
	if stored.maxBody != nil {
		src.MaxBody = *stored.maxBody
	}
	return nil
}

// override is a tenant's rate override as read, or nil.
func override(rate *float64, burst *int) *Override {
	if rate == nil || burst == nil {
		return nil
	}
	return &Override{Rate: *rate, Burst: *burst}
}
