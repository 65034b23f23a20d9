package endpoints

import (
	"errors"
	"fmt"

	"github.com/google/uuid"
)

// The errors every change and read of this package returns for a person
// to act on (the admin API maps them to 404, 409 and 422, the CLI prints
// them). They never repeat a secret or a header's value.
var (
	// ErrNotFound: the id names no endpoint, delivery or tenant (or none
	// the caller may see).
	ErrNotFound = errors.New("not found")
	// ErrInvalid: the request itself is wrong (a URL, a filter, a cap).
	ErrInvalid = errors.New("invalid")
	// ErrConflict: the request clashes with what exists (the tenant has
	// as many endpoints as it may).
	ErrConflict = errors.New("conflict")
)

// NotFoundError names what was looked for.
type NotFoundError struct {
	Resource string // endpoint, delivery, tenant
	ID       string
}

func (e *NotFoundError) Error() string        { return fmt.Sprintf("no %s %s", e.Resource, e.ID) }
func (e *NotFoundError) Is(target error) bool { return target == ErrNotFound }

// InvalidError says which input is wrong and why.
type InvalidError struct {
	Field  string
	Reason string
}

func (e *InvalidError) Error() string        { return e.Field + ": " + e.Reason }
func (e *InvalidError) Is(target error) bool { return target == ErrInvalid }

// ConflictError says what clashed.
type ConflictError struct {
	Detail string
}

func (e *ConflictError) Error() string        { return e.Detail }
func (e *ConflictError) Is(target error) bool { return target == ErrConflict }

func notFound(resource, id string) error { return &NotFoundError{Resource: resource, ID: id} }

func invalid(field, format string, args ...any) error {
	return &InvalidError{Field: field, Reason: fmt.Sprintf(format, args...)}
}

// checkID refuses an id that is no canonical uuid as unknown: it names
// nothing, and the database would answer with its own text.
func checkID(resource, id string) error {
	if u, err := uuid.Parse(id); err != nil || u.String() != id {
		return notFound(resource, id)
	}
	return nil
}
