package tenancy

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"net/netip"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sluicehq/sluice/internal/pg"
	"github.com/sluicehq/sluice/internal/provider"
	"github.com/sluicehq/sluice/internal/refusal"
)

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

// MaxTolerance bounds how far a signed timestamp may be from now, and
// MaxOverlap how long old secrets stay valid after a rotation.
const (
	MaxTolerance = 24 * time.Hour
	MaxOverlap   = 30 * 24 * time.Hour
)

// MaxBodyLimit is the largest body a source may accept (GitHub's own limit).
const MaxBodyLimit = 25 << 20

// Source is a verified webhook sender, as an operator sees it: never its
// secrets, only how many are active.
type Source struct {
	ID               string     `json:"id"`
	TenantID         string     `json:"tenant_id"`
	Kind             string     `json:"kind"`
	Account          string     `json:"account"`
	Disabled         bool       `json:"disabled"`
	DisabledAt       *time.Time `json:"disabled_at,omitempty"`
	ToleranceSeconds *int64     `json:"tolerance_seconds,omitempty" doc:"Signed timestamps may be this far from now; absent: the default (300)."`
	MaxBodyBytes     *int64     `json:"max_body_bytes,omitempty" doc:"Largest body; absent: the kind's default."`
	IPAllowlist      []string   `json:"ip_allowlist" nullable:"false" doc:"CIDRs deliveries may come from; empty: any."`
	ActiveSecrets    int        `json:"active_secrets" doc:"Secrets that verify deliveries now (several during a rotation)."`
	CreatedAt        time.Time  `json:"created_at"`
}

// SourceFilter selects sources.
type SourceFilter struct {
	TenantID string // empty: every tenant
	Kind     string
	Disabled *bool
}

// CreateSource creates a source with its first secret and returns its id.
func (s Store) CreateSource(ctx context.Context, src NewSource) (string, error) {
	if err := s.checkNewSource(src); err != nil {
		return "", err
	}
	tolerance, maxBody, settings, allow := src.columns()
	var id string
	// The hmac column holds any kind's settings: it is named for the first
	// kind that had some.
	err := pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx, `INSERT INTO sources (tenant_id, kind, account, tolerance_seconds, max_body_bytes, hmac, ip_allowlist)
VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id::text`,
			src.TenantID, src.Kind, src.Account, tolerance, maxBody, settings, allow).Scan(&id)
		if err != nil {
			return dbError(err, "create source", src.TenantID)
		}
		if err := s.addSecret(ctx, tx, id, src.Secret, nil); err != nil {
			return err
		}
		return s.record(ctx, tx, "source.create", "source", id, src.TenantID)
	})
	if name, ok := pg.Violation(err); ok && name == "sources_tenant_kind_account" {
		return "", s.duplicateSource(ctx, src)
	}
	return id, err
}

// checkNewSource judges a new source with its kind's provider: the secret,
// the settings, the limits.
func (s Store) checkNewSource(src NewSource) error {
	p, err := s.provider(src.Kind)
	if err != nil {
		return invalid("kind", err)
	}
	if err := checkID("tenant", src.TenantID); err != nil {
		return err
	}
	if src.Account == "" {
		return refusal.InvalidField("account", "a source needs an account")
	}
	if err := validateSecret(p, src.Secret); err != nil {
		return err
	}
	if src.MaxBodyBytes < 0 || src.MaxBodyBytes > MaxBodyLimit {
		return bodyLimitError()
	}
	if src.Tolerance < 0 || src.Tolerance > MaxTolerance {
		return refusal.InvalidField("tolerance", "must be positive and at most %s", MaxTolerance)
	}
	if _, err := p.Open(src.Settings, src.Tolerance); err != nil {
		return invalid("settings", err)
	}
	return nil
}

// columns are the source's settings as stored: NULL for the defaults.
func (src NewSource) columns() (tolerance, maxBody *int64, settings []byte, allow []netip.Prefix) {
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
	allow = src.IPAllowlist
	if allow == nil {
		allow = []netip.Prefix{}
	}
	return tolerance, maxBody, settings, allow
}

// duplicateSource names the source a new one clashes with.
func (s Store) duplicateSource(ctx context.Context, src NewSource) error {
	var existing string
	_ = s.Pool.QueryRow(ctx, `SELECT id::text FROM sources WHERE tenant_id = $1 AND kind = $2 AND account = $3`,
		src.TenantID, src.Kind, src.Account).Scan(&existing)
	return refusal.New(refusal.Conflict, "tenant %s already has a %s source for account %s (source %s)",
		src.TenantID, src.Kind, src.Account, existing)
}

func bodyLimitError() error {
	return refusal.InvalidField("max_body_bytes", "must be between 1 and %d", MaxBodyLimit)
}

const sourceColumns = `SELECT s.id::text, s.tenant_id::text, s.kind, s.account, s.disabled_at,
       s.tolerance_seconds::bigint, s.max_body_bytes, coalesce(s.ip_allowlist::text[], '{}'),
       (SELECT count(*) FROM source_secrets ss WHERE ss.source_id = s.id AND (ss.expires_at IS NULL OR ss.expires_at > now()))::int,
       s.created_at
FROM sources s`

func scanSource(row pgx.CollectableRow) (Source, error) {
	var src Source
	err := row.Scan(&src.ID, &src.TenantID, &src.Kind, &src.Account, &src.DisabledAt, &src.ToleranceSeconds,
		&src.MaxBodyBytes, &src.IPAllowlist, &src.ActiveSecrets, &src.CreatedAt)
	src.Disabled = src.DisabledAt != nil
	return src, err
}

// Source returns one source.
func (s Store) Source(ctx context.Context, id string) (Source, error) {
	return readOne(ctx, s, "source", id, sourceColumns+` WHERE s.id = $1`, scanSource)
}

// Sources lists sources in id order; the second value is the next page's
// cursor ("" on the last page).
func (s Store) Sources(ctx context.Context, f SourceFilter, p Page) ([]Source, string, error) {
	after, err := p.after()
	if err != nil {
		return nil, "", err
	}
	if f.TenantID != "" {
		if err := checkID("tenant", f.TenantID); err != nil {
			return nil, "", err
		}
	}
	return readPage(ctx, s, "sources", p, scanSource, func(s Source) string { return s.ID }, sourceColumns+`
WHERE ($1::uuid IS NULL OR s.id > $1) AND ($2::uuid IS NULL OR s.tenant_id = $2)
  AND ($3 = '' OR s.kind = $3) AND ($4::boolean IS NULL OR (s.disabled_at IS NOT NULL) = $4)
ORDER BY s.id LIMIT $5`,
		after, nullable(f.TenantID), f.Kind, f.Disabled)
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// RotateSecret adds a new secret to a source and lets every other active
// secret expire after overlap (which may be 0: at once), so deliveries signed
// with the old one keep verifying while the provider switches. Ingest sees
// the change within its source cache TTL (5 s by default).
func (s Store) RotateSecret(ctx context.Context, sourceID, secret string, overlap time.Duration) (time.Time, error) {
	return s.rotate(ctx, sourceID, func(string) (string, error) { return secret, nil }, overlap)
}

// RotateGeneratedSecret rotates to a secret Sluice makes (whsec_ and the
// base64 of 32 random bytes: a valid Standard Webhooks secret, and an HMAC
// key for the other kinds), for senders whose secret is chosen by the
// receiver. Stripe makes its own secrets, so a Stripe source refuses. The
// secret is returned once; only its sealed form is kept.
func (s Store) RotateGeneratedSecret(ctx context.Context, sourceID string, overlap time.Duration) (string, time.Time, error) {
	var secret string
	expires, err := s.rotate(ctx, sourceID, func(kind string) (string, error) {
		if kind == "stripe" {
			return "", refusal.InvalidField("secret", "Stripe makes its own signing secrets: pass the one its dashboard shows")
		}
		raw := make([]byte, 32)
		if _, err := rand.Read(raw); err != nil {
			return "", err
		}
		secret = "whsec_" + base64.StdEncoding.EncodeToString(raw)
		return secret, nil
	}, overlap)
	return secret, expires, err
}

func (s Store) rotate(ctx context.Context, sourceID string, secretFor func(kind string) (string, error), overlap time.Duration) (time.Time, error) {
	if overlap < 0 || overlap > MaxOverlap {
		return time.Time{}, refusal.InvalidField("overlap", "must be between 0 and %s", MaxOverlap)
	}
	if err := checkID("source", sourceID); err != nil {
		return time.Time{}, err
	}
	var expires time.Time
	err := pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
		// Lock the source so two rotations at once cannot expire each
		// other's new secret.
		var kind, tenantID string
		err := tx.QueryRow(ctx, `SELECT kind, tenant_id::text FROM sources WHERE id = $1 FOR UPDATE`, sourceID).Scan(&kind, &tenantID)
		if errors.Is(err, pgx.ErrNoRows) {
			return notFound("source", sourceID)
		}
		if err != nil {
			return fmt.Errorf("rotate secret: %w", err)
		}
		if provider.Kind(kind) == provider.KindAPI {
			return refusal.InvalidField("source", "the api source has no signing secret: use apikey create")
		}
		// Refused before any secret is expired: a secret that cannot verify
		// would lock the source out once the overlap ends.
		p, err := s.provider(kind)
		if err != nil {
			return invalid("kind", err)
		}
		secret, err := secretFor(kind)
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
		if err := s.addSecret(ctx, tx, sourceID, secret, nil); err != nil {
			return err
		}
		return s.record(ctx, tx, "source.rotate_secret", "source", sourceID, tenantID)
	})
	return expires, err
}

// validateSecret says why secret cannot authenticate deliveries to a source
// of p's kind, or nil. Every way a secret enters (a new source, a rotation)
// asks it, so each refuses the same secrets with the same message.
func validateSecret(p provider.Provider, secret string) error {
	if secret == "" {
		return refusal.InvalidField("secret", "a source needs a secret")
	}
	if err := p.CheckSecret(secret); err != nil {
		return invalid("secret", err)
	}
	return nil
}

// DisableSource makes a source refuse every delivery (404, as if unknown),
// for a compromised secret; ingest sees it within its source cache TTL.
func (s Store) DisableSource(ctx context.Context, sourceID string) error {
	return s.updateSource(ctx, sourceID, "source.disable", `UPDATE sources SET disabled_at = coalesce(disabled_at, now()) WHERE id = $1 RETURNING tenant_id::text`)
}

// EnableSource undoes DisableSource; ingest accepts the source's
// deliveries again within its source cache TTL.
func (s Store) EnableSource(ctx context.Context, sourceID string) error {
	return s.updateSource(ctx, sourceID, "source.enable", `UPDATE sources SET disabled_at = NULL WHERE id = $1 RETURNING tenant_id::text`)
}

// SetBodyLimit sets the largest body a source accepts (1 byte to 25 MiB),
// or, with 0, returns it to its kind's default.
func (s Store) SetBodyLimit(ctx context.Context, sourceID string, maxBodyBytes int64) error {
	if maxBodyBytes < 0 || maxBodyBytes > MaxBodyLimit {
		return bodyLimitError()
	}
	var limit *int64
	if maxBodyBytes > 0 {
		limit = &maxBodyBytes
	}
	return s.updateSource(ctx, sourceID, "source.set_body_limit", `UPDATE sources SET max_body_bytes = $2 WHERE id = $1 RETURNING tenant_id::text`, limit)
}

// updateSource runs one statement changing a source (returning its tenant)
// and audits it.
func (s Store) updateSource(ctx context.Context, sourceID, action, sql string, args ...any) error {
	if err := checkID("source", sourceID); err != nil {
		return err
	}
	return pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
		var tenantID string
		err := tx.QueryRow(ctx, sql, append([]any{sourceID}, args...)...).Scan(&tenantID)
		if errors.Is(err, pgx.ErrNoRows) {
			return notFound("source", sourceID)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", action, err)
		}
		return s.record(ctx, tx, action, "source", sourceID, tenantID)
	})
}

func (s Store) addSecret(ctx context.Context, tx pgx.Tx, sourceID, secret string, expires *time.Time) error {
	if s.Ring == nil {
		return refusal.InvalidField("secret", "this process has no key ring to seal secrets with (set SLUICE_SECRET_KEY)")
	}
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
