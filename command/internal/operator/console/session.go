package console

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sluicehq/sluice/command/internal/operator/admintoken"
	"github.com/sluicehq/sluice/internal/refusal"
)

var (
	//go:embed sql/session_create.sql
	sessionCreateSQL string
	//go:embed sql/session_find.sql
	sessionFindSQL string
	//go:embed sql/session_revoke.sql
	sessionRevokeSQL string
)

// ErrNoSession: the cookie names no live session (none, signed out,
// expired, or its token revoked or expired).
var ErrNoSession = refusal.Sub(refusal.Unauthenticated, "no_session", "no console session")

// Session is a signed-in browser: the admin token it acts with, opened
// from its row with the cookie's secret, and the CSRF token its forms
// carry.
type Session struct {
	id       []byte
	TokenID  string
	Token    string
	Role     admintoken.Role
	TenantID string
	// Portal is a portal session's scope (destinations or tenant); empty
	// for an operator's session.
	Portal    admintoken.PortalScope
	CSRF      string
	ExpiresAt time.Time
}

// sessions keeps sessions in Postgres (migrations/00032_console.sql).
type sessions struct {
	pool *pgxpool.Pool
}

// create starts a session for token (whose record is rec) ending at
// expires, and returns the cookie's value.
func (s sessions) create(ctx context.Context, token string, rec admintoken.Token, expires time.Time) (string, error) {
	secret := make([]byte, 32)
	csrf := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		return "", fmt.Errorf("console session: %w", err)
	}
	if _, err := rand.Read(csrf); err != nil {
		return "", fmt.Errorf("console session: %w", err)
	}
	id := sessionID(secret)
	sealed, err := seal(secret, id, []byte(token))
	if err != nil {
		return "", err
	}
	if _, err := s.pool.Exec(ctx, sessionCreateSQL, id, rec.ID, sealed, base64.RawURLEncoding.EncodeToString(csrf), expires); err != nil {
		return "", fmt.Errorf("create console session: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(secret), nil
}

// find returns the live session a cookie's value names.
func (s sessions) find(ctx context.Context, cookie string) (Session, error) {
	secret, err := base64.RawURLEncoding.DecodeString(cookie)
	if err != nil || len(secret) != 32 {
		return Session{}, ErrNoSession
	}
	ss := Session{id: sessionID(secret)}
	var sealed []byte
	err = s.pool.QueryRow(ctx, sessionFindSQL, ss.id).Scan(&ss.TokenID, &sealed, &ss.CSRF, &ss.ExpiresAt, &ss.Role, &ss.TenantID, &ss.Portal)
	if errors.Is(err, pgx.ErrNoRows) {
		return Session{}, ErrNoSession
	}
	if err != nil {
		return Session{}, fmt.Errorf("read console session: %w", err)
	}
	token, err := open(secret, ss.id, sealed)
	if err != nil {
		return Session{}, err
	}
	ss.Token = string(token)
	return ss, nil
}

// revoke ends a session.
func (s sessions) revoke(ctx context.Context, ss Session) error {
	if _, err := s.pool.Exec(ctx, sessionRevokeSQL, ss.id); err != nil {
		return fmt.Errorf("end console session: %w", err)
	}
	return nil
}

// sessionID is how a session is found: the SHA-256 of its secret.
func sessionID(secret []byte) []byte {
	sum := sha256.Sum256(secret)
	return sum[:]
}

// aead is the cipher sealing a session's token, keyed from the cookie's
// secret (HKDF-SHA-256), never from anything the database holds.
func aead(secret []byte) (cipher.AEAD, error) {
	key, err := hkdf.Key(sha256.New, secret, nil, "sluice console session token", 32)
	if err != nil {
		return nil, fmt.Errorf("console session key: %w", err)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("console session key: %w", err)
	}
	return cipher.NewGCM(block)
}

func seal(secret, id, plain []byte) ([]byte, error) {
	c, err := aead(secret)
	if err != nil {
		return nil, err
	}
	nonce := make([]byte, c.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, fmt.Errorf("console session: %w", err)
	}
	return c.Seal(nonce, nonce, plain, id), nil
}

func open(secret, id, sealed []byte) ([]byte, error) {
	c, err := aead(secret)
	if err != nil {
		return nil, err
	}
	if len(sealed) < c.NonceSize() {
		return nil, ErrNoSession
	}
	plain, err := c.Open(nil, sealed[:c.NonceSize()], sealed[c.NonceSize():], id)
	if err != nil {
		return nil, ErrNoSession
	}
	return plain, nil
}
