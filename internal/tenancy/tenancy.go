// Package tenancy administers tenants, their sources and their workspaces:
// what the `sluice tenant|source|workspace` commands and the demo set up.
// Source secrets are encrypted here, before they reach the database.
//
// A source's kind is checked here, against the provider registry, and not
// by the database: the registry is a value built at run time (a test or a
// build may hold kinds of its own), which a CHECK constraint cannot know
// (migration 00008 dropped it). Every way a source or a secret enters goes
// through Store, so the registry's providers judge kinds, secrets and
// settings before anything is stored.
package tenancy

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/netip"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sluicehq/sluice/ingest/provider"
	"github.com/sluicehq/sluice/ingest/providers"
	"github.com/sluicehq/sluice/internal/keyring"
)

// Store writes tenancy records.
type Store struct {
	Pool *pgxpool.Pool
	Ring *keyring.Ring
	// Providers are the kinds a source may have. Default: the shipped
	// kinds (providers.Builtin).
	Providers *provider.Registry
}

// provider returns the provider of a kind a source may be created with.
func (s Store) provider(kind string) (provider.Provider, error) {
	reg := s.Providers
	if reg == nil {
		reg = providers.Builtin()
	}
	return reg.Lookup(provider.Kind(kind))
}

// CreateTenant returns the new tenant's id.
func (s Store) CreateTenant(ctx context.Context, name string) (string, error) {
	if name == "" {
		return "", errors.New("tenant name is required")
	}
	var id string
	if err := s.Pool.QueryRow(ctx, `INSERT INTO tenants (name) VALUES ($1) RETURNING id::text`, name).Scan(&id); err != nil {
		return "", fmt.Errorf("create tenant: %w", err)
	}
	return id, nil
}

// NewSource describes a source to create. Zero settings mean the instance
// defaults.
type NewSource struct {
	TenantID string
	Kind     string // a provider.Kind of Store's registry
	Account  string
	Secret   string
	// Tolerance is how far a signed timestamp may be from now.
	Tolerance time.Duration
	// MaxBodyBytes caps the body (at most 25 MiB).
	MaxBodyBytes int64
	// Settings are the kind's own settings as JSON (e.g. hmac.Settings),
	// checked by its provider; only kinds that need them take them.
	Settings []byte
	// IPAllowlist restricts the addresses a delivery may come from (CIDRs),
	// on top of the signature.
	IPAllowlist []netip.Prefix
}

// MaxBodyLimit is the largest body a source may accept (GitHub's own limit).
const MaxBodyLimit = 25 << 20

// CreateSource creates a source with its first secret and returns its id.
func (s Store) CreateSource(ctx context.Context, src NewSource) (string, error) {
	p, err := s.provider(src.Kind)
	if err != nil {
		return "", err
	}
	if src.Account == "" {
		return "", errors.New("a source needs an account")
	}
	if err := validateSecret(p, src.Secret); err != nil {
		return "", err
	}
	if src.MaxBodyBytes < 0 || src.MaxBodyBytes > MaxBodyLimit {
		return "", fmt.Errorf("max body bytes must be between 1 and %d", MaxBodyLimit)
	}
	if _, err := p.Open(src.Settings, src.Tolerance); err != nil {
		return "", err
	}
	var (
		id        string
		tolerance *int64
		maxBody   *int64
		settings  []byte
	)
	if src.Tolerance > 0 {
		secs := int64((src.Tolerance + time.Second - 1) / time.Second)
		tolerance = &secs
	}
	if src.MaxBodyBytes > 0 {
		maxBody = &src.MaxBodyBytes
	}
	if len(src.Settings) > 0 {
		settings = src.Settings
	}
	allow := src.IPAllowlist
	if allow == nil {
		allow = []netip.Prefix{}
	}
	// The hmac column holds any kind's settings: it is named for the first
	// kind that had some.
	err = pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx, `INSERT INTO sources (tenant_id, kind, account, tolerance_seconds, max_body_bytes, hmac, ip_allowlist)
VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id::text`,
			src.TenantID, src.Kind, src.Account, tolerance, maxBody, settings, allow).Scan(&id)
		if err != nil {
			return fmt.Errorf("create source: %w", err)
		}
		return s.addSecret(ctx, tx, id, src.Secret, nil)
	})
	return id, err
}

// RotateSecret adds a new secret to a source and lets every other active
// secret expire after overlap (which may be 0: at once), so deliveries signed
// with the old one keep verifying while the provider switches. Ingest sees
// the change within its source cache TTL (5 s by default).
func (s Store) RotateSecret(ctx context.Context, sourceID, secret string, overlap time.Duration) (time.Time, error) {
	if overlap < 0 {
		return time.Time{}, errors.New("overlap must not be negative")
	}
	var expires time.Time
	err := pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
		// Lock the source so two rotations at once cannot expire each
		// other's new secret.
		var kind string
		err := tx.QueryRow(ctx, `SELECT kind FROM sources WHERE id = $1 FOR UPDATE`, sourceID).Scan(&kind)
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("no source %s", sourceID)
		}
		if err != nil {
			return fmt.Errorf("rotate secret: %w", err)
		}
		if provider.Kind(kind) == provider.KindAPI {
			return errors.New("the api source has no signing secret: use apikey create")
		}
		// Refused before any secret is expired: a secret that cannot verify
		// would lock the source out once the overlap ends.
		p, err := s.provider(kind)
		if err != nil {
			return err
		}
		if err := validateSecret(p, secret); err != nil {
			return err
		}
		if err := tx.QueryRow(ctx, `UPDATE source_secrets SET expires_at = least(coalesce(expires_at, 'infinity'), now() + $2::interval)
WHERE source_id = $1 AND (expires_at IS NULL OR expires_at > now()) RETURNING now() + $2::interval`, sourceID, overlap).Scan(&expires); err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("expire old secrets: %w", err)
		}
		return s.addSecret(ctx, tx, sourceID, secret, nil)
	})
	return expires, err
}

// validateSecret says why secret cannot authenticate deliveries to a source
// of p's kind, or nil. Every way a secret enters (a new source, a rotation)
// asks it, so each refuses the same secrets with the same message.
func validateSecret(p provider.Provider, secret string) error {
	if secret == "" {
		return errors.New("a source needs a secret")
	}
	return p.CheckSecret(secret)
}

// DisableSource makes a source refuse every delivery (404, as if unknown),
// for a compromised secret; ingest sees it within its source cache TTL.
func (s Store) DisableSource(ctx context.Context, sourceID string) error {
	tag, err := s.Pool.Exec(ctx, `UPDATE sources SET disabled_at = coalesce(disabled_at, now()) WHERE id = $1`, sourceID)
	if err != nil {
		return fmt.Errorf("disable source: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("no source %s", sourceID)
	}
	return nil
}

// apiKeyPrefix marks Sluice API keys, so a leaked one is recognisable.
const apiKeyPrefix = "sk_sluice_"

// CreateAPIKey makes a tenant API key for POST /v1/events and returns its id
// and the key. Only the key's SHA-256 is stored: the key cannot be shown
// again. The tenant's api source (its first-party event key space) is
// created with the first key.
func (s Store) CreateAPIKey(ctx context.Context, tenantID string) (id, key string, err error) {
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return "", "", fmt.Errorf("api key: %w", err)
	}
	key = apiKeyPrefix + base64.RawURLEncoding.EncodeToString(raw)
	sum := sha256.Sum256([]byte(key))
	err = pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
		var sourceID string
		if err := tx.QueryRow(ctx, `INSERT INTO sources (tenant_id, kind, account) VALUES ($1, $2, $2)
ON CONFLICT ON CONSTRAINT sources_tenant_kind_account DO UPDATE SET kind = EXCLUDED.kind
RETURNING id::text`, tenantID, string(provider.KindAPI)).Scan(&sourceID); err != nil {
			return fmt.Errorf("api source: %w", err)
		}
		if err := tx.QueryRow(ctx, `INSERT INTO api_keys (tenant_id, source_id, key_sha256) VALUES ($1, $2, $3) RETURNING id::text`,
			tenantID, sourceID, sum[:]).Scan(&id); err != nil {
			return fmt.Errorf("store api key: %w", err)
		}
		return nil
	})
	if err != nil {
		return "", "", err
	}
	return id, key, nil
}

func (s Store) addSecret(ctx context.Context, tx pgx.Tx, sourceID, secret string, expires *time.Time) error {
	keyID, sealed, err := s.Ring.Seal([]byte(secret), []byte(sourceID))
	if err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `INSERT INTO source_secrets (source_id, key_id, ciphertext, expires_at) VALUES ($1, $2, $3, $4)`,
		sourceID, keyID, sealed, expires); err != nil {
		return fmt.Errorf("store secret: %w", err)
	}
	return nil
}

// CreateWorkspace creates a workspace of the tenant and maps the provider
// customer to it; it returns the workspace id.
func (s Store) CreateWorkspace(ctx context.Context, tenantID, customerID, name string) (string, error) {
	if customerID == "" {
		return "", errors.New("a workspace needs a provider customer id")
	}
	var id string
	err := pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, `INSERT INTO workspaces (tenant_id, name) VALUES ($1, $2) RETURNING id::text`, tenantID, name).Scan(&id); err != nil {
			return fmt.Errorf("create workspace: %w", err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO workspace_customers (tenant_id, customer_id, workspace_id) VALUES ($1, $2, $3)`,
			tenantID, customerID, id); err != nil {
			return fmt.Errorf("map customer %s: %w", customerID, err)
		}
		return nil
	})
	return id, err
}

// Balance returns a workspace's credit balance (0 before its first grant).
func (s Store) Balance(ctx context.Context, workspaceID string) (int64, error) {
	var credits int64
	err := s.Pool.QueryRow(ctx, `SELECT credits FROM balances WHERE workspace_id = $1`, workspaceID).Scan(&credits)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read balance: %w", err)
	}
	return credits, nil
}
