// Package admintoken keeps the bearer tokens of the admin API: created by
// `sluice admintoken create` or POST /admin/v1/admin-tokens, shown once,
// stored as their SHA-256 only, each with a role, an optional tenant scope
// and a lifetime: positive, DefaultTTL unless given, at most MaxTTL. Tokens
// made before lifetimes were required have none; they keep working, and
// List flags them (NoExpiry) so they can be replaced.
//
// Why a plain SHA-256 and not a password hash (bcrypt, argon2): a token is
// 32 random bytes, so there is no dictionary to try and a fast hash is as
// safe as a slow one; and a fast, unsalted hash lets a token be found by
// one indexed look-up of its digest. That look-up is also why timing leaks
// nothing: the index compares digests, and an attacker who varies a
// guessed token cannot steer its digest towards a stored one, so how long
// a comparison takes says nothing about how close a guess was.
package admintoken

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sluicehq/sluice/command/internal/operator/input"
	"github.com/sluicehq/sluice/internal/audit"
	"github.com/sluicehq/sluice/internal/pg"
	"github.com/sluicehq/sluice/internal/refusal"
)

// Prefix marks admin tokens, so a leaked one is recognisable (by secret
// scanners too) and never mistaken for a tenant API key (sk_sluice_).
const Prefix = "slk_adm_"

// PortalPrefix marks the token of a portal session (PortalScope set): a
// release that knows no portal scopes refuses it by its prefix, so a
// rollback never turns a portal session into a whole tenant's token.
const PortalPrefix = "slk_ptl_"

// PortalScope confines a portal session's token beyond its tenant (the
// admin API's authorization enforces it on every route).
type PortalScope string

const (
	// PortalDestinations reaches the tenant's endpoints and deliveries
	// only.
	PortalDestinations PortalScope = "destinations"
	// PortalTenant reaches the tenant's whole view.
	PortalTenant PortalScope = "tenant"
)

// ParsePortalScope accepts the names above.
func ParsePortalScope(s string) (PortalScope, error) {
	switch p := PortalScope(s); p {
	case PortalDestinations, PortalTenant:
		return p, nil
	}
	return "", fmt.Errorf("portal scope %q: want destinations or tenant", s)
}

// Role is what a token may do.
type Role string

const (
	// RoleRead may read (GET), payloads included.
	RoleRead Role = "read"
	// RoleOperate may also act: create, change, replay, rewind.
	RoleOperate Role = "operate"
)

// ParseRole accepts the names above.
func ParseRole(s string) (Role, error) {
	switch r := Role(s); r {
	case RoleRead, RoleOperate:
		return r, nil
	}
	return "", fmt.Errorf("role %q: want read or operate", s)
}

// Token is a token's record, never the token itself.
type Token struct {
	ID        string     `json:"id"`
	Name      string     `json:"name"`
	Role      Role       `json:"role"`
	TenantID  string     `json:"tenant_id,omitempty" doc:"The tenant the token is confined to; absent: every tenant."`
	CreatedAt time.Time  `json:"created_at"`
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
	RevokedAt *time.Time `json:"revoked_at,omitempty"`
	// NoExpiry flags a token made before lifetimes were required: it never
	// expires. Revoke it once a token with a lifetime replaces it.
	NoExpiry bool `json:"no_expiry" doc:"The token never expires: made before lifetimes were required. Replace it with one that does, then revoke it."`
	// Portal is set on a portal session's token: what of its tenant it
	// reaches.
	Portal PortalScope `json:"portal_scope,omitempty" enum:"destinations,tenant" doc:"Set on a portal session's token (made by a portal link's use): destinations (the tenant's endpoints and deliveries) or tenant (its whole view); absent: an admin token."`
}

// The lifetimes of a token: the default, and the longest.
const (
	DefaultTTL = 720 * time.Hour
	MaxTTL     = 365 * 24 * time.Hour
)

// Scoped reports whether the token is confined to one tenant.
func (t Token) Scoped() bool { return t.TenantID != "" }

// Errors of Authenticate. The API answers all of them alike (401), so a
// caller learns nothing about which tokens exist.
var (
	ErrUnknown = refusal.Sub(refusal.Unauthenticated, "unknown_token", "unknown admin token")
	ErrRevoked = refusal.Sub(refusal.Unauthenticated, "revoked_token", "admin token revoked")
	ErrExpired = refusal.Sub(refusal.Unauthenticated, "expired_token", "admin token expired")
)

// noSuchToken: no token has that id.
func noSuchToken(id string) error {
	return refusal.New(refusal.NotFound, "no such admin token: %s", id)
}

// Store reads and writes tokens.
type Store struct {
	Pool *pgxpool.Pool
	// Actor is recorded in the audit trail with every token created or
	// revoked, in the same transaction; nil records nothing.
	Actor *audit.Actor
}

// New describes a token to create.
type New struct {
	Name     string
	Role     Role
	TenantID string        // empty: every tenant
	TTL      time.Duration // 0: DefaultTTL; negative or over MaxTTL is refused
	// Portal makes a portal session's token (PortalPrefix, scoped to
	// TenantID, which it needs); empty: an admin token.
	Portal PortalScope
}

// Create makes a token and returns its record and the token, which cannot
// be shown again.
func (s Store) Create(ctx context.Context, n New) (Token, string, error) {
	var (
		t      Token
		secret string
	)
	err := pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
		var err error
		t, secret, err = s.CreateIn(ctx, tx, n)
		return err
	})
	return t, secret, err
}

// CreateIn is Create in tx, the caller's transaction (a portal link's
// exchange makes its session's token in the transaction that uses the
// link).
func (s Store) CreateIn(ctx context.Context, tx pgx.Tx, n New) (Token, string, error) {
	if err := n.check(); err != nil {
		return Token{}, "", err
	}
	var tenant, portal *string
	if n.TenantID != "" {
		tenant = &n.TenantID
	}
	prefix := Prefix
	if n.Portal != "" {
		prefix, portal = PortalPrefix, (*string)(&n.Portal)
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return Token{}, "", fmt.Errorf("admin token: %w", err)
	}
	secret := prefix + base64.RawURLEncoding.EncodeToString(raw)
	expires := time.Now().Add(n.TTL)
	rows, err := tx.Query(ctx, `INSERT INTO admin_tokens (name, role, tenant_id, token_sha256, expires_at, portal_scope)
VALUES ($1, $2, $3, $4, $5, $6) RETURNING `+columns, n.Name, string(n.Role), tenant, digest(secret), expires, portal)
	var t Token
	if err == nil {
		t, err = pgx.CollectExactlyOneRow(rows, scan)
	}
	if name, ok := pg.Violation(err); ok && name == "admin_tokens_tenant_id_fkey" {
		return Token{}, "", refusal.NoSuch("tenant", n.TenantID)
	}
	if err == nil {
		err = s.Actor.Record(ctx, tx, audit.Target{Action: "admintoken.create", Resource: "admintoken", ID: t.ID, TenantID: t.TenantID})
	}
	if err != nil {
		return Token{}, "", fmt.Errorf("create admin token: %w", err)
	}
	return t, secret, nil
}

// check refuses what Create must not make, and fills the default
// lifetime.
func (n *New) check() error {
	if _, err := ParseRole(string(n.Role)); err != nil {
		return err
	}
	if n.TTL == 0 {
		n.TTL = DefaultTTL
	}
	if err := input.Lifetime("expiry", n.TTL, MaxTTL); err != nil {
		return err
	}
	if err := input.Text("name", n.Name, input.MaxName); err != nil {
		return err
	}
	if n.TenantID != "" && !input.IsUUID(n.TenantID) {
		return refusal.NoSuch("tenant", n.TenantID)
	}
	if n.Portal == "" {
		return nil
	}
	if _, err := ParsePortalScope(string(n.Portal)); err != nil {
		return err
	}
	if n.TenantID == "" {
		return errors.New("admin token: a portal token needs a tenant")
	}
	return nil
}

const columns = `id::text, name, role, coalesce(tenant_id::text, ''), created_at, expires_at, revoked_at, coalesce(portal_scope, '')`

func scan(row pgx.CollectableRow) (Token, error) {
	var t Token
	err := row.Scan(&t.ID, &t.Name, &t.Role, &t.TenantID, &t.CreatedAt, &t.ExpiresAt, &t.RevokedAt, &t.Portal)
	t.NoExpiry = t.ExpiresAt == nil
	return t, err
}

func digest(token string) []byte {
	sum := sha256.Sum256([]byte(token))
	return sum[:]
}

// Authenticate returns the record of a live token.
func (s Store) Authenticate(ctx context.Context, token string) (Token, error) {
	if !strings.HasPrefix(token, Prefix) && !strings.HasPrefix(token, PortalPrefix) {
		return Token{}, ErrUnknown
	}
	rows, err := s.Pool.Query(ctx, `SELECT `+columns+` FROM admin_tokens WHERE token_sha256 = $1`, digest(token))
	if err != nil {
		return Token{}, fmt.Errorf("read admin token: %w", err)
	}
	t, err := pgx.CollectExactlyOneRow(rows, scan)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return Token{}, ErrUnknown
	case err != nil:
		return Token{}, fmt.Errorf("read admin token: %w", err)
	case t.RevokedAt != nil:
		return Token{}, ErrRevoked
	case t.ExpiresAt != nil && !t.ExpiresAt.After(time.Now()):
		return Token{}, ErrExpired
	}
	return t, nil
}

// List returns every token, newest first, revoked ones included.
func (s Store) List(ctx context.Context) ([]Token, error) {
	rows, err := s.Pool.Query(ctx, `SELECT `+columns+` FROM admin_tokens ORDER BY created_at DESC, id`)
	if err != nil {
		return nil, fmt.Errorf("list admin tokens: %w", err)
	}
	list, err := pgx.CollectRows(rows, scan)
	if err != nil {
		return nil, fmt.Errorf("list admin tokens: %w", err)
	}
	return list, nil
}

// Get returns one token's record.
func (s Store) Get(ctx context.Context, id string) (Token, error) {
	if !input.IsUUID(id) {
		return Token{}, noSuchToken(id)
	}
	rows, err := s.Pool.Query(ctx, `SELECT `+columns+` FROM admin_tokens WHERE id = $1`, id)
	if err != nil {
		return Token{}, fmt.Errorf("read admin token: %w", err)
	}
	t, err := pgx.CollectExactlyOneRow(rows, scan)
	if errors.Is(err, pgx.ErrNoRows) {
		return Token{}, noSuchToken(id)
	}
	if err != nil {
		return Token{}, fmt.Errorf("read admin token: %w", err)
	}
	return t, nil
}

// Revoke stops a token at once (tokens are not cached). Revoking twice
// keeps the first time.
func (s Store) Revoke(ctx context.Context, id string) error {
	if !input.IsUUID(id) {
		return noSuchToken(id)
	}
	return pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
		var tenant string
		err := tx.QueryRow(ctx, `UPDATE admin_tokens SET revoked_at = coalesce(revoked_at, now()) WHERE id = $1
RETURNING coalesce(tenant_id::text, '')`, id).Scan(&tenant)
		if errors.Is(err, pgx.ErrNoRows) {
			return noSuchToken(id)
		}
		if err != nil {
			return fmt.Errorf("revoke admin token: %w", err)
		}
		return s.Actor.Record(ctx, tx, audit.Target{Action: "admintoken.revoke", Resource: "admintoken", ID: id, TenantID: tenant})
	})
}
