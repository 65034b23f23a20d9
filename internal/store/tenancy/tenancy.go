// Package tenancy administers tenants, their sources, workspaces, API keys
// and rate limits: what the `sluice tenant|source|workspace|apikey` commands,
// the admin API (internal/operator/admin) and the demo set up, through the
// same functions. Refusals are internal/refusal's (not found, conflict,
// invalid), worded for a person; the database's own text never leaves as is.
// Source secrets are encrypted here, before they reach the database.
//
// A source's kind is checked here, against the provider registry, and not
// by the database: the registry is a value built at run time (a test or a
// build may hold kinds of its own), which a CHECK constraint cannot know
// (migration 00008 dropped it). Every way a source or a secret enters goes
// through Store, so the registry's providers judge kinds, secrets and
// settings before anything is stored.
package tenancy

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sluicehq/sluice/internal/audit"
	"github.com/sluicehq/sluice/internal/keyring"
	"github.com/sluicehq/sluice/internal/provider"
	"github.com/sluicehq/sluice/internal/refusal"
)

// Store reads and writes tenancy records. It is the one implementation of
// each administration operation: the CLI and the admin API both call it.
type Store struct {
	Pool *pgxpool.Pool
	Ring *keyring.Ring
	// Providers are the kinds a source may have: the process's registry
	// (provider.Registry says who chooses it); nil knows no kind.
	Providers *provider.Registry
	// Actor is recorded in the audit trail, in the transaction of every
	// change; nil records nothing.
	Actor *audit.Actor
}

// As returns the store acting for actor: its changes are audited as his.
func (s Store) As(actor *audit.Actor) Store {
	s.Actor = actor
	return s
}

// provider returns the provider of a kind a source may be created with.
func (s Store) provider(kind string) (provider.Provider, error) {
	return s.Providers.Lookup(provider.Kind(kind))
}

// Page is one page of a list in id order (keyset pagination): the items
// after After (empty: from the start), at most Limit.
type Page struct {
	After string
	Limit int
}

// Page sizes: the default and the most one page holds.
const (
	DefaultPageSize = 50
	MaxPageSize     = 500
)

func (p Page) size() int {
	switch {
	case p.Limit <= 0:
		return DefaultPageSize
	case p.Limit > MaxPageSize:
		return MaxPageSize
	}
	return p.Limit
}

// after is the keyset bound as a query parameter: nil from the start. An
// After that is no uuid cannot come from a list, so it is refused.
func (p Page) after() (*string, error) {
	if p.After == "" {
		return nil, nil
	}
	if err := checkID("cursor", p.After); err != nil {
		return nil, refusal.InvalidField("cursor", "not a cursor this API returned")
	}
	return &p.After, nil
}

// readOne reads the one row query finds for id, as a not-found error
// naming what when there is none.
func readOne[T any](ctx context.Context, s Store, what, id, query string, scan pgx.RowToFunc[T]) (T, error) {
	var zero T
	if err := checkID(what, id); err != nil {
		return zero, err
	}
	rows, err := s.Pool.Query(ctx, query, id)
	if err != nil {
		return zero, fmt.Errorf("read %s: %w", what, err)
	}
	v, err := pgx.CollectExactlyOneRow(rows, scan)
	if errors.Is(err, pgx.ErrNoRows) {
		return v, notFound(what, id)
	}
	if err != nil {
		return v, fmt.Errorf("read %s: %w", what, err)
	}
	return v, nil
}

// readPage runs a list query whose last argument is the page's size plus
// one, and returns the page and the next page's cursor.
func readPage[T any](ctx context.Context, s Store, what string, p Page, scan pgx.RowToFunc[T], id func(T) string, query string, args ...any) ([]T, string, error) {
	rows, err := s.Pool.Query(ctx, query, append(args, p.size()+1)...)
	if err != nil {
		return nil, "", fmt.Errorf("list %s: %w", what, err)
	}
	list, err := pgx.CollectRows(rows, scan)
	if err != nil {
		return nil, "", fmt.Errorf("list %s: %w", what, err)
	}
	list, next := trim(list, p.size(), id)
	return list, next, nil
}

// trim cuts a page read with one item more than its size, and returns the
// cursor of the next page ("" when this is the last).
func trim[T any](items []T, size int, id func(T) string) ([]T, string) {
	if len(items) <= size {
		return items, ""
	}
	items = items[:size]
	return items, id(items[size-1])
}

// record audits a change in its transaction.
func (s Store) record(ctx context.Context, tx pgx.Tx, action, resource, id, tenantID string) error {
	return s.Actor.Record(ctx, tx, audit.Target{Action: action, Resource: resource, ID: id, TenantID: tenantID})
}
