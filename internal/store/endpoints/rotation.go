package endpoints

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/sluicehq/sluice/internal/audit"
	"github.com/sluicehq/sluice/internal/keyring/sealed"
)

// SealedColumns are where this store keeps values sealed with the key
// ring, each bound to its endpoint: signing secrets and static headers
// (an endpoint without headers holds none). A rotation of a batch is
// audited as keys.rotate of the column's resource, the new key's id as its
// target.
func (s Store) SealedColumns() []sealed.Column {
	byEndpoint := func(id string) []byte { return []byte(id) }
	return []sealed.Column{
		{Kind: "endpoint secrets", Table: "endpoint_secrets", ID: "id", Owner: "endpoint_id", KeyID: "key_id", Sealed: "ciphertext",
			AD: byEndpoint, Audit: s.auditRotation("endpoint_secret")},
		{Kind: "endpoint headers", Table: "endpoints", ID: "id", Owner: "id", KeyID: "headers_key_id", Sealed: "headers_sealed",
			AD: byEndpoint, Audit: s.auditRotation("endpoint_headers")},
	}
}

func (s Store) auditRotation(resource string) func(context.Context, pgx.Tx, string) error {
	return func(ctx context.Context, tx pgx.Tx, keyID string) error {
		return s.Actor.Record(ctx, tx, audit.Target{Action: "keys.rotate", Resource: resource, ID: keyID})
	}
}
