package tenancy

import (
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/sluicehq/sluice/internal/pg"
)

// The errors every operation of this package returns for a person to act
// on. The admin API maps them to 404, 409 and 422 and the CLI prints them;
// neither ever shows the database's own text (see pg.Violation).
var (
	// ErrNotFound: the id names nothing (or nothing the caller may see).
	ErrNotFound = errors.New("not found")
	// ErrConflict: the request clashes with what exists.
	ErrConflict = errors.New("conflict")
	// ErrInvalid: the request itself is wrong.
	ErrInvalid = errors.New("invalid")
)

// NotFoundError names what was looked for.
type NotFoundError struct {
	Resource string // tenant, source, workspace, api key
	ID       string
}

func (e *NotFoundError) Error() string        { return fmt.Sprintf("no %s %s", e.Resource, e.ID) }
func (e *NotFoundError) Is(target error) bool { return target == ErrNotFound }

// ConflictError says what clashed.
type ConflictError struct {
	Detail string
}

func (e *ConflictError) Error() string        { return e.Detail }
func (e *ConflictError) Is(target error) bool { return target == ErrConflict }

// InvalidError says which input is wrong and why.
type InvalidError struct {
	Field  string
	Reason string
}

func (e *InvalidError) Error() string {
	if e.Field == "" {
		return e.Reason
	}
	return e.Field + ": " + e.Reason
}
func (e *InvalidError) Is(target error) bool { return target == ErrInvalid }

func notFound(resource, id string) error { return &NotFoundError{Resource: resource, ID: id} }

func invalid(field string, err error) error { return &InvalidError{Field: field, Reason: err.Error()} }

// checkID refuses an id that is not a uuid as unknown: it names nothing,
// and the database would answer with its own text.
func checkID(resource, id string) error {
	if _, err := uuid.Parse(id); err != nil {
		return notFound(resource, id)
	}
	return nil
}

// tenantMissing maps the foreign keys to tenants: a write naming a tenant
// that does not exist.
var tenantMissing = map[string]bool{
	"sources_tenant_id_fkey":             true,
	"workspaces_tenant_id_fkey":          true,
	"workspace_customers_tenant_id_fkey": true,
	"api_keys_tenant_id_fkey":            true,
	"tenant_limits_tenant_id_fkey":       true,
	"admin_tokens_tenant_id_fkey":        true,
}

// dbError turns what Postgres refused into an error a person can act on,
// or wraps it (what) for the log when it is not the request's fault.
func dbError(err error, what, tenantID string) error {
	name, ok := pg.Violation(err)
	if ok && tenantMissing[name] {
		return notFound("tenant", tenantID)
	}
	return fmt.Errorf("%s: %w", what, err)
}
