package tenancy

import (
	"context"
	_ "embed"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
)

var (
	//go:embed sql/sealed_probe.sql
	sealedProbeSQL string
	//go:embed sql/sealed_credentials_probe.sql
	sealedCredentialsProbeSQL string
)

// KeyRingError says which key ids the stored secrets were sealed with that
// the key ring cannot open: every source sealed with one of them would
// answer 503 to every delivery.
type KeyRingError struct {
	KeyIDs []string
}

func (e *KeyRingError) Error() string {
	return fmt.Sprintf("the key ring cannot open source secrets sealed with key id(s) %s: SLUICE_SECRET_KEY lacks those keys or holds other bytes under their ids",
		strings.Join(e.KeyIDs, ", "))
}

// CheckKeyRing proves that the store's key ring opens one live secret and
// one set of API credentials of every key id in use, or returns a
// *KeyRingError naming those it cannot.
// An empty database passes: there is nothing to open yet.
func (s Store) CheckKeyRing(ctx context.Context) error {
	rows, err := s.Pool.Query(ctx, sealedProbeSQL)
	if err != nil {
		return fmt.Errorf("read sealed secrets: %w", err)
	}
	type sealed struct {
		keyID, sourceID string
		ciphertext      []byte
	}
	probes, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (sealed, error) {
		var p sealed
		return p, r.Scan(&p.keyID, &p.sourceID, &p.ciphertext)
	})
	if err != nil {
		return fmt.Errorf("read sealed secrets: %w", err)
	}
	credRows, err := s.Pool.Query(ctx, sealedCredentialsProbeSQL)
	if err != nil {
		return fmt.Errorf("read sealed API credentials: %w", err)
	}
	credentials, err := pgx.CollectRows(credRows, func(r pgx.CollectableRow) (sealed, error) {
		var p sealed
		return p, r.Scan(&p.keyID, &p.sourceID, &p.ciphertext)
	})
	if err != nil {
		return fmt.Errorf("read sealed API credentials: %w", err)
	}
	var failed []string
	for _, p := range probes {
		if _, err := s.Ring.Open(p.keyID, p.ciphertext, []byte(p.sourceID)); err != nil && !slices.Contains(failed, p.keyID) {
			failed = append(failed, p.keyID)
		}
	}
	for _, p := range credentials {
		if _, err := s.Ring.Open(p.keyID, p.ciphertext, apiCredentialsAD(p.sourceID)); err != nil && !slices.Contains(failed, p.keyID) {
			failed = append(failed, p.keyID)
		}
	}
	if len(failed) > 0 {
		slices.Sort(failed)
		return &KeyRingError{KeyIDs: failed}
	}
	return nil
}
