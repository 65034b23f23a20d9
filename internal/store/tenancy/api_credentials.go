package tenancy

import (
	"context"
	_ "embed"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/sluicehq/sluice/internal/provider"
	"github.com/sluicehq/sluice/internal/refusal"
)

//go:embed sql/api_credentials_set.sql
var apiCredentialsSetSQL string

//go:embed sql/api_credentials_get.sql
var apiCredentialsGetSQL string

// ErrNoAPICredentials: the source has no API credentials, so it cannot be
// reconciled.
var ErrNoAPICredentials = refusal.Sub(refusal.Invalid, "no_api_credentials", "the source has no API credentials")

// apiCredentialsAD binds sealed credentials to their source and their use:
// a ciphertext moved into source_secrets, or to another source, does not
// open.
func apiCredentialsAD(sourceID string) []byte { return []byte("api-credentials:" + sourceID) }

// SetAPICredentials checks a source's API credentials with its kind's rules
// and stores them sealed with the key ring, replacing any it had. The
// credentials are never returned by a command nor logged; errors never
// quote them.
func (s Store) SetAPICredentials(ctx context.Context, sourceID string, credentials []byte) error {
	rec, err := s.reconciler(ctx, sourceID)
	if err != nil {
		return err
	}
	if err := rec.CheckAPICredentials(credentials); err != nil {
		return err
	}
	keyID, sealed, err := s.Ring.Seal(credentials, apiCredentialsAD(sourceID))
	if err != nil {
		return err
	}
	var id string
	err = s.Pool.QueryRow(ctx, apiCredentialsSetSQL, sourceID, keyID, sealed).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return notFound("source", sourceID)
	}
	if err != nil {
		return fmt.Errorf("store API credentials: %w", err)
	}
	return nil
}

// ClearAPICredentials removes a source's API credentials; reconciliation
// of the source stops.
func (s Store) ClearAPICredentials(ctx context.Context, sourceID string) error {
	if _, err := s.Pool.Exec(ctx, `DELETE FROM source_api_credentials WHERE source_id = $1`, sourceID); err != nil {
		return fmt.Errorf("clear API credentials: %w", err)
	}
	return nil
}

// APICredentials returns a source's kind and its API credentials, opened
// with the key ring, or ErrNoAPICredentials.
func (s Store) APICredentials(ctx context.Context, sourceID string) (provider.Kind, []byte, error) {
	var (
		kind       string
		keyID      *string
		ciphertext []byte
	)
	err := s.Pool.QueryRow(ctx, apiCredentialsGetSQL, sourceID).Scan(&kind, &keyID, &ciphertext)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil, notFound("source", sourceID)
	}
	if err != nil {
		return "", nil, fmt.Errorf("read API credentials: %w", err)
	}
	if keyID == nil {
		return provider.Kind(kind), nil, ErrNoAPICredentials
	}
	creds, err := s.Ring.Open(*keyID, ciphertext, apiCredentialsAD(sourceID))
	if err != nil {
		return "", nil, fmt.Errorf("source %s API credentials: %w", sourceID, err)
	}
	return provider.Kind(kind), creds, nil
}

// reconciler returns the API side of a source's kind, or says the kind has
// none.
func (s Store) reconciler(ctx context.Context, sourceID string) (provider.Reconciler, error) {
	var kind string
	err := s.Pool.QueryRow(ctx, `SELECT kind FROM sources WHERE id = $1`, sourceID).Scan(&kind)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, notFound("source", sourceID)
	}
	if err != nil {
		return nil, fmt.Errorf("read source: %w", err)
	}
	p, err := s.provider(kind)
	if err != nil {
		return nil, err
	}
	rec, ok := p.(provider.Reconciler)
	if !ok {
		return nil, fmt.Errorf("a %s source has no provider API to reconcile against", kind)
	}
	return rec, nil
}
