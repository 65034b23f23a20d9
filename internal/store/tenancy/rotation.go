package tenancy

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/sluicehq/sluice/internal/audit"
	"github.com/sluicehq/sluice/internal/keyring/sealed"
)

// SealedColumns are where this store keeps values sealed with the key
// ring: sources' signing secrets (bound to their source) and their API
// credentials (bound to the source and their use). A rotation of a batch
// is audited as keys.rotate of the column's resource, the new key's id as
// its target.
func (s Store) SealedColumns() []sealed.Column {
	return []sealed.Column{
		{Kind: "source secrets", Table: "source_secrets", ID: "id", Owner: "source_id", KeyID: "key_id", Sealed: "ciphertext",
			AD: func(sourceID string) []byte { return []byte(sourceID) }, Audit: s.auditRotation("source_secret")},
		{Kind: "source API credentials", Table: "source_api_credentials", ID: "source_id", Owner: "source_id", KeyID: "key_id",
			Sealed: "ciphertext", AD: apiCredentialsAD, Audit: s.auditRotation("source_api_credentials")},
	}
}

func (s Store) auditRotation(resource string) func(context.Context, pgx.Tx, string) error {
	return func(ctx context.Context, tx pgx.Tx, keyID string) error {
		return s.Actor.Record(ctx, tx, audit.Target{Action: "keys.rotate", Resource: resource, ID: keyID})
	}
}
