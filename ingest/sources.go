package ingest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sluicehq/sluice/ingest/signature"
	"github.com/sluicehq/sluice/internal/keyring"
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
	Kind     string
	Account  string
	Disabled bool
	Secrets  [][]byte
	// MaxBody caps the body: the source's own limit or the kind's default.
	MaxBody int64
	// Allow lists the networks deliveries may come from; empty allows any.
	Allow []netip.Prefix
	// Verifier checks the source's scheme with its settings (nil for the
	// api kind, which has no webhook endpoint).
	Verifier signature.Verifier
	// Fields says where an hmac source's event id and type are found.
	Fields *HMACSettings
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

// githubMaxBody is GitHub's own payload cap: a GitHub source accepts
// whatever GitHub may send unless it says otherwise, because GitHub never
// redelivers on its own.
const githubMaxBody = 25 << 20

// sources reads sources from Postgres and keeps them briefly, so a burst of
// deliveries costs one query per source. A disabled or rotated source takes
// effect within the cache TTL.
type sources struct {
	pool     *pgxpool.Pool
	ring     *keyring.Ring
	defaults sourceDefaults
	cache    *ttlCache[*source] // nil value: known not to exist
}

func newSources(pool *pgxpool.Pool, ring *keyring.Ring, ttl time.Duration, defaults sourceDefaults) *sources {
	s := &sources{pool: pool, ring: ring, defaults: defaults}
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

func (s *sources) load(ctx context.Context, id string) (*source, error) {
	rows, err := s.pool.Query(ctx, sourceSQL, id)
	if err != nil {
		return nil, fmt.Errorf("load source: %w", err)
	}
	defer rows.Close()
	var (
		src       *source
		tolerance *int32
		maxBody   *int64
		hmacCfg   []byte
		allow     []netip.Prefix
	)
	for rows.Next() {
		var (
			tenantID, kind, account string
			disabled                bool
			keyID                   *string
			ciphertext              []byte
		)
		if err := rows.Scan(&tenantID, &kind, &account, &disabled, &tolerance, &maxBody, &hmacCfg, &allow, &keyID, &ciphertext); err != nil {
			return nil, fmt.Errorf("load source: %w", err)
		}
		if src == nil {
			src = &source{ID: id, TenantID: tenantID, Kind: kind, Account: account, Disabled: disabled, Allow: allow}
		}
		if keyID == nil {
			continue
		}
		secret, err := s.ring.Open(*keyID, ciphertext, []byte(id))
		if err != nil {
			return nil, fmt.Errorf("source %s: %w: %w", id, errSealed, err)
		}
		src.Secrets = append(src.Secrets, secret)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("load source: %w", err)
	}
	if src == nil {
		return nil, nil
	}
	tol := s.defaults.Tolerance
	if tolerance != nil {
		tol = time.Duration(*tolerance) * time.Second
	}
	src.MaxBody = s.defaults.MaxBodyBytes
	if src.Kind == "github" {
		src.MaxBody = githubMaxBody
	}
	if maxBody != nil {
		src.MaxBody = *maxBody
	}
	switch src.Kind {
	case "stripe":
		src.Verifier = signature.Stripe{Tolerance: tol}
	case "github":
		src.Verifier = signature.GitHub{}
	case "standard_webhooks":
		src.Verifier = signature.StandardWebhooks{Tolerance: tol}
	case "hmac":
		var settings HMACSettings
		if err := json.Unmarshal(hmacCfg, &settings); err != nil {
			return nil, fmt.Errorf("source %s: hmac settings: %w", id, err)
		}
		v, err := settings.verifier(tol)
		if err != nil {
			return nil, fmt.Errorf("source %s: %w", id, err)
		}
		src.Verifier, src.Fields = v, &settings
	}
	return src, nil
}
