package endpoints

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// MaxOverlap bounds how long old secrets keep signing after a rotation,
// and DefaultOverlap is the overlap a caller gives when asked for none
// (the API and the CLI): a day, for the receiver to switch.
const (
	MaxOverlap     = 30 * 24 * time.Hour
	DefaultOverlap = 24 * time.Hour
)

// newSecret makes a signing secret: "whsec_" and the base64 of 32 random
// bytes, a Standard Webhooks secret.
func newSecret() (string, error) {
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return "", fmt.Errorf("make secret: %w", err)
	}
	return "whsec_" + base64.StdEncoding.EncodeToString(raw), nil
}

// RotateSecret gives an endpoint a new signing secret, returned here once,
// and lets every other active one expire after overlap (0: at once; at
// most MaxOverlap). Until then every request carries one signature per
// secret (Targets returns each), so a receiver verifies with either while
// it switches. The second value is when the old secrets expire.
func (s Store) RotateSecret(ctx context.Context, id string, overlap time.Duration) (string, time.Time, error) {
	if overlap < 0 || overlap > MaxOverlap {
		return "", time.Time{}, invalid("overlap", "must be between 0 and %s", MaxOverlap)
	}
	if err := checkID("endpoint", id); err != nil {
		return "", time.Time{}, err
	}
	secret, err := newSecret()
	if err != nil {
		return "", time.Time{}, err
	}
	var expires time.Time
	err = pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
		// The endpoint's row is locked so two rotations at once cannot
		// expire each other's new secret.
		var tenant string
		err := tx.QueryRow(ctx, `UPDATE endpoints SET updated_at = now() WHERE id = $1 AND tenant_id IS NOT NULL RETURNING tenant_id::text, now() + $2::interval`,
			id, overlap).Scan(&tenant, &expires)
		if errors.Is(err, pgx.ErrNoRows) {
			return notFound("endpoint", id)
		}
		if err != nil {
			return fmt.Errorf("rotate secret: %w", err)
		}
		if _, err := tx.Exec(ctx, `UPDATE endpoint_secrets SET expires_at = least(coalesce(expires_at, 'infinity'), now() + $2::interval)
WHERE endpoint_id = $1 AND (expires_at IS NULL OR expires_at > now())`, id, overlap); err != nil {
			return fmt.Errorf("expire old secrets: %w", err)
		}
		if err := s.addSecret(ctx, tx, id, secret, nil); err != nil {
			return err
		}
		return s.record(ctx, tx, "endpoint.rotate_secret", id, tenant)
	})
	if err != nil {
		return "", time.Time{}, err
	}
	return secret, expires, nil
}

// addSecret seals secret for endpoint id and stores it.
func (s Store) addSecret(ctx context.Context, tx pgx.Tx, id, secret string, expires *time.Time) error {
	if s.Ring == nil {
		return errNoRing
	}
	keyID, sealed, err := s.Ring.Seal([]byte(secret), []byte(id))
	if err != nil {
		return fmt.Errorf("seal secret: %w", err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO endpoint_secrets (endpoint_id, key_id, ciphertext, expires_at) VALUES ($1, $2, $3, $4)`,
		id, keyID, sealed, expires); err != nil {
		return fmt.Errorf("store secret: %w", err)
	}
	return nil
}
