// Package operate holds the operations behind Sluice's admin API and CLI:
// searching the inbox, one event's trail from its deliveries to its
// effects, dead letters (list, inspect, replay), quarantined and
// conflicting events, consumer group lag, the slot's status and rewinds.
// It speaks no HTTP: the admin API and the CLI call the same functions, so
// each operation has one implementation.
//
// Tenant isolation (invariant 9, operator side): every operation takes a
// *Scope. nil is unscoped (an operator of the whole deployment); a scope
// limits it to one tenant, and an id that belongs to another tenant is
// refused as not found exactly like an id that does not exist, so a scoped
// caller learns nothing about other tenants. What spans tenants (consumer groups,
// the slot, rewinds) refuses a scoped caller (refusal.Forbidden).
//
// It reads the pipeline's tables directly (it is read-side; its writes go
// through the consumers' own replay protocol and Kafka's offset commits).
// Operations that return a Payload read an event's content: callers audit
// them.
package operate

import (
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/sluicehq/sluice/internal/consumers/groups"
	"github.com/sluicehq/sluice/internal/envelope"
)

// Scope limits an operation to one tenant's data. A nil *Scope is
// unscoped.
type Scope struct {
	TenantID string
}

// tenant is the scope's tenant as a nullable query argument.
func (s *Scope) tenant() *string {
	if s == nil {
		return nil
	}
	return &s.TenantID
}

// Config says which deployment the operator works on.
type Config struct {
	// Topics names the deployment's topics and consumer groups.
	Topics envelope.Topics
	// Groups are the deployment's groups: its effect groups, and the
	// dispatcher's configuration (a dead-letter replay runs a group's
	// handler; the dispatcher's needs its URL and secret).
	Groups groups.Options
	// Trails are the queries of the running effect groups' effects on one
	// object (effect.Group.Trail), which an event's trail shows; their
	// union is built once, here.
	Trails []string
	// Slot is the relay's replication slot. Default "sluice".
	Slot string
	// Metrics is the process's registry: the overview's samples read
	// ingest's answers from it (nil: none).
	Metrics prometheus.Gatherer
}

// Operator runs the operations against one deployment.
type Operator struct {
	pool  *pgxpool.Pool
	admin *kadm.Client
	cfg   Config
	// effectsSQL is the union of cfg.Trails ("" for none).
	effectsSQL string
	// minutes keeps the overview's settled minutes (an Operator lives as
	// long as its process).
	minutes *minutes
	// lags keeps the last hour's lag samples (SampleProcess).
	lags *sampleRing
}

// New returns an operator over pool and, for the Kafka operations (lag,
// rewinds), admin; admin may be nil for a caller that needs only Postgres.
func New(pool *pgxpool.Pool, admin *kadm.Client, cfg Config) *Operator {
	if cfg.Slot == "" {
		cfg.Slot = "sluice"
	}
	return &Operator{pool: pool, admin: admin, cfg: cfg, effectsSQL: effectsQuery(cfg.Trails), minutes: &minutes{}, lags: newSampleRing(int(OverviewWindow / SampleEvery))}
}

// Page is one page of a list, newest first. Next is the cursor of the page
// after it ("" on the last page).
type Page[T any] struct {
	Items []T    `json:"items"`
	Next  string `json:"next,omitempty"`
}

// The bounds of a page: DefaultLimit when none is asked, never more than
// MaxLimit.
const (
	DefaultLimit = 50
	MaxLimit     = 500
)

func pageLimit(asked int) (int, error) {
	switch {
	case asked == 0:
		return DefaultLimit, nil
	case asked < 0 || asked > MaxLimit:
		return 0, invalid("limit", "must be between 1 and %d", MaxLimit)
	}
	return asked, nil
}

// page cuts a list read with limit+1 rows into a page of limit, with the
// cursor of its last item when more follow.
func page[T any](items []T, limit int, cursor func(T) string) Page[T] {
	p := Page[T]{Items: items}
	if len(items) > limit {
		p.Items = items[:limit]
		p.Next = cursor(p.Items[limit-1])
	}
	return p
}
