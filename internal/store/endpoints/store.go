// Package endpoints keeps tenants' destinations: the HTTP endpoints a
// tenant's events are delivered to, their signing secrets, filters and
// limits. The admin API and the CLI change them through Store; the fan-out
// reads Subscriptions and the deliverer Targets.
//
// Secrets and static headers are sealed with the key ring, the endpoint's
// id as additional data, so a sealed value copied to another endpoint's row
// does not open.
package endpoints

import (
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sluicehq/sluice/internal/audit"
	"github.com/sluicehq/sluice/internal/keyring"
)

// Store reads and writes endpoints.
type Store struct {
	Pool *pgxpool.Pool
	Ring *keyring.Ring
	// Actor is recorded in the audit trail, in the transaction of every
	// change; nil records nothing.
	Actor *audit.Actor
}

// As returns the store acting for actor: its changes are audited as his.
func (s Store) As(actor *audit.Actor) Store {
	s.Actor = actor
	return s
}
