package tenancy

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sluicehq/sluice/internal/provider"
)

// apiKeyPrefix marks Sluice API keys, so a leaked one is recognisable.
const apiKeyPrefix = "sk_sluice_"

// APIKey is a tenant's key for POST /v1/events, without the key (only its
// SHA-256 is kept).
type APIKey struct {
	ID        string     `json:"id"`
	TenantID  string     `json:"tenant_id"`
	CreatedAt time.Time  `json:"created_at"`
	RevokedAt *time.Time `json:"revoked_at,omitempty"`
}

// CreateAPIKey makes a tenant API key for POST /v1/events and returns its id
// and the key. Only the key's SHA-256 is stored: the key cannot be shown
// again. The tenant's api source (its first-party event key space) is
// created with the first key.
func (s Store) CreateAPIKey(ctx context.Context, tenantID string) (id, key string, err error) {
	if err := checkID("tenant", tenantID); err != nil {
		return "", "", err
	}
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
			return dbError(err, "api source", tenantID)
		}
		if err := tx.QueryRow(ctx, `INSERT INTO api_keys (tenant_id, source_id, key_sha256) VALUES ($1, $2, $3) RETURNING id::text`,
			tenantID, sourceID, sum[:]).Scan(&id); err != nil {
			return dbError(err, "store api key", tenantID)
		}
		return s.record(ctx, tx, "apikey.create", "apikey", id, tenantID)
	})
	if err != nil {
		return "", "", err
	}
	return id, key, nil
}

// RevokeAPIKey stops a key from working; running ingest instances refuse
// it within their key cache TTL (5 s). Revoking twice keeps the first time.
func (s Store) RevokeAPIKey(ctx context.Context, id string) error {
	if err := checkID("api key", id); err != nil {
		return err
	}
	return pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
		var tenantID string
		err := tx.QueryRow(ctx, `UPDATE api_keys SET revoked_at = coalesce(revoked_at, now()) WHERE id = $1 RETURNING tenant_id::text`, id).Scan(&tenantID)
		if errors.Is(err, pgx.ErrNoRows) {
			return notFound("api key", id)
		}
		if err != nil {
			return fmt.Errorf("revoke api key: %w", err)
		}
		return s.record(ctx, tx, "apikey.revoke", "apikey", id, tenantID)
	})
}

const apiKeyColumns = `SELECT id::text, tenant_id::text, created_at, revoked_at FROM api_keys k`

func scanAPIKey(row pgx.CollectableRow) (APIKey, error) {
	var k APIKey
	return k, row.Scan(&k.ID, &k.TenantID, &k.CreatedAt, &k.RevokedAt)
}

// APIKey returns one key's record.
func (s Store) APIKey(ctx context.Context, id string) (APIKey, error) {
	return readOne(ctx, s, "api key", id, apiKeyColumns+` WHERE id = $1`, scanAPIKey)
}

// APIKeys lists keys in id order, of one tenant (empty: all), revoked ones
// only when asked; the second value is the next page's cursor.
func (s Store) APIKeys(ctx context.Context, tenantID string, revoked bool, p Page) ([]APIKey, string, error) {
	after, err := p.after()
	if err != nil {
		return nil, "", err
	}
	if tenantID != "" {
		if err := checkID("tenant", tenantID); err != nil {
			return nil, "", err
		}
	}
	return readPage(ctx, s, "api keys", p, scanAPIKey, func(k APIKey) string { return k.ID }, apiKeyColumns+`
WHERE ($1::uuid IS NULL OR id > $1) AND ($2::uuid IS NULL OR tenant_id = $2) AND ($3 OR revoked_at IS NULL)
ORDER BY id LIMIT $4`,
		after, nullable(tenantID), revoked)
}
