// Package endpoints keeps tenants' destinations: the HTTP endpoints a
// tenant's events are delivered to, their signing secrets, filters and
// limits. The admin API and the CLI change them through Store; the fan-out
// reads Subscriptions and the deliverer Targets.
//
// Secrets and static headers are sealed with the key ring, the endpoint's
// id as additional data, so a sealed value copied to another endpoint's row
// does not open. No read of this package returns a secret or a header's
// value: a secret is shown once, by the create or the rotation that made
// it, and headers are shown by name.
//
// Every change is audited in its own transaction (Store.Actor). Refusals a
// person can act on are internal/refusal's (not found, invalid, conflict);
// the database's own text never leaves as is.
package endpoints

import (
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sluicehq/sluice/internal/audit"
	"github.com/sluicehq/sluice/internal/envelope"
	"github.com/sluicehq/sluice/internal/keyring"
)

// Store reads and writes endpoints.
type Store struct {
	Pool *pgxpool.Pool
	Ring *keyring.Ring
	// Actor is recorded in the audit trail, in the transaction of every
	// change; nil records nothing.
	Actor *audit.Actor
	// Limits are the deployment's caps and defaults; zero fields take the
	// defaults of Limits.
	Limits Limits
	// CheckURL judges an endpoint's URL after this package's own syntax
	// checks (the binary gives it internal/egress's policy, which refuses
	// literal private addresses); nil: the syntax checks only. Its error's
	// text is shown to the caller.
	CheckURL func(raw string) error
	// Topics, when set, are the deployment's: an operator's disabling of
	// an endpoint is then told to its tenant's other endpoints (an
	// operational event, Announce) in the disabling's transaction. Nil:
	// not told.
	Topics *envelope.Topics
}

// As returns the store acting for actor: its changes are audited as his.
func (s Store) As(actor *audit.Actor) Store {
	s.Actor = actor
	return s
}
