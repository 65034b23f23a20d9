// Package refusal is Sluice's one vocabulary of "no": the kinds of refusal
// a store, a stage or the operator layer returns when a request cannot be
// done as asked. An id that names nothing, a clash with what exists, an
// input that is wrong, a caller who may not, a caller who is not known, a
// caller who asks too often, a part that cannot answer here: each is a Kind,
// declared once. Where a kind has several meanings a caller tells apart (an
// event type's built-in name, its quota and an incompatible version are
// three conflicts), a package declares a sub-kind with Sub.
//
// What a refusal becomes is decided once per face, from its kind and
// sub-kind: the admin API's HTTP status and problem type (one table in
// command/internal/operator/admin), the command line's exit status and
// JSON (command/internal/cli/exit.go), the console's page. A refusal's text is written
// for a person and shown as it is; an error that carries no refusal is a
// failure, logged and answered without its text.
//
// The invariant this package keeps with dev/house: no other package
// declares a sentinel of these kinds (an errors.New, or an error type that
// matches sentinels with an Is method); it returns a refusal (New, NoSuch,
// InvalidField) or declares a sub-kind (Sub). Sentinels that are no
// refusal (a lost slot, a schema behind the binary) are listed, with why,
// in dev/house.
package refusal

import (
	"errors"
	"fmt"
)

// Kind is what sort of "no" a refusal is.
type Kind uint8

const (
	// NotFound: the id names nothing, or nothing the caller may see (an
	// id another tenant owns is refused exactly as one that does not
	// exist).
	NotFound Kind = iota + 1
	// Conflict: the request clashes with what exists or is happening (a
	// name taken, a dead letter replayed already, a group with running
	// members); the same request may pass once that changes.
	Conflict
	// Invalid: the request itself is wrong (an input, a window, a schema,
	// a dead letter whose data its handler refuses again); it fails alike
	// until it is changed.
	Invalid
	// Forbidden: the caller is known and may not do this (a read-only
	// token acting, a tenant-scoped caller on what spans tenants).
	Forbidden
	// Unauthenticated: the caller is not known (a missing, unknown,
	// revoked or expired token; no session).
	Unauthenticated
	// Limited: the caller asked too often; it may ask again later.
	Limited
	// Unavailable: what would answer does not run in this process or
	// cannot answer now; ask again, or ask another process.
	Unavailable
)

// Kinds lists every kind, in the order above: what a face's mapping
// must cover.
func Kinds() []Kind {
	return []Kind{NotFound, Conflict, Invalid, Forbidden, Unauthenticated, Limited, Unavailable}
}

// String is the kind's name as the faces print it (-o json's code, the
// audit trail's outcome): not_found, conflict, invalid, forbidden,
// unauthenticated, limited, unavailable.
func (k Kind) String() string {
	switch k {
	case NotFound:
		return "not_found"
	case Conflict:
		return "conflict"
	case Invalid:
		return "invalid"
	case Forbidden:
		return "forbidden"
	case Unauthenticated:
		return "unauthenticated"
	case Limited:
		return "limited"
	case Unavailable:
		return "unavailable"
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Error is one refusal: its kind, its sub-kind when it has one, the input
// at fault when one is, and what a person reads.
type Error struct {
	Kind Kind
	// Code names the sub-kind ("builtin", "already_replayed"); "" for the
	// kind itself.
	Code string
	// Field is the input at fault ("event_type", "--limit"), when one is.
	Field string
	// Message says what is wrong in words a person can act on; it never
	// holds a secret or the database's own text.
	Message string
	// sentinel marks the values made to be matched (the kinds' Err...,
	// Sub): errors.Is(err, s) holds for every refusal of s's kind and,
	// when s names one, its sub-kind.
	sentinel bool
}

func (e *Error) Error() string {
	if e.Field != "" {
		return e.Field + ": " + e.Message
	}
	return e.Message
}

// Is makes a sentinel match every refusal of its kind and, when it names
// one, its sub-kind: errors.Is(err, refusal.ErrNotFound) holds of any
// not-found, errors.Is(err, catalog.ErrQuota) of the quota's conflicts
// only.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.sentinel && t.Kind == e.Kind && (t.Code == "" || t.Code == e.Code)
}

// Name is the sub-kind's code, or the kind's name for a refusal of no
// sub-kind: what -o json prints as the error's code.
func (e *Error) Name() string {
	if e.Code != "" {
		return e.Code
	}
	return e.Kind.String()
}

// With is a refusal of e's kind and sub-kind in other words: a sub-kind's
// sentinel saying what exactly clashed.
func (e *Error) With(format string, args ...any) *Error {
	return &Error{Kind: e.Kind, Code: e.Code, Field: e.Field, Message: fmt.Sprintf(format, args...)}
}

// The kinds' sentinels, for errors.Is.
var (
	ErrNotFound        = &Error{Kind: NotFound, Message: "not found", sentinel: true}
	ErrConflict        = &Error{Kind: Conflict, Message: "conflict", sentinel: true}
	ErrInvalid         = &Error{Kind: Invalid, Message: "invalid", sentinel: true}
	ErrForbidden       = &Error{Kind: Forbidden, Message: "forbidden", sentinel: true}
	ErrUnauthenticated = &Error{Kind: Unauthenticated, Message: "unauthenticated", sentinel: true}
	ErrLimited         = &Error{Kind: Limited, Message: "too many requests", sentinel: true}
	ErrUnavailable     = &Error{Kind: Unavailable, Message: "unavailable", sentinel: true}
)

// Sentinel is kind's sentinel (ErrNotFound for NotFound, ...).
func Sentinel(kind Kind) *Error {
	for _, s := range []*Error{ErrNotFound, ErrConflict, ErrInvalid, ErrForbidden, ErrUnauthenticated, ErrLimited, ErrUnavailable} {
		if s.Kind == kind {
			return s
		}
	}
	return &Error{Kind: kind, Message: kind.String(), sentinel: true}
}

// Sub declares a sub-kind of kind named code (lowercase words joined by
// "_", unique across Sluice: it is a problem type and a JSON code), as the
// sentinel its refusals match; message is its text when it is returned
// or wrapped as it is.
func Sub(kind Kind, code, message string) *Error {
	return &Error{Kind: kind, Code: code, Message: message, sentinel: true}
}

// New is a refusal of kind in words.
func New(kind Kind, format string, args ...any) *Error {
	return &Error{Kind: kind, Message: fmt.Sprintf(format, args...)}
}

// NoSuch is the not-found of what (a resource: "tenant", "dead letter")
// named id: "no tenant 7f0c...".
func NoSuch(what string, id any) *Error {
	return &Error{Kind: NotFound, Message: fmt.Sprintf("no %s %v", what, id)}
}

// InvalidField is the refusal of one input, field, and why.
func InvalidField(field, format string, args ...any) *Error {
	return &Error{Kind: Invalid, Field: field, Message: fmt.Sprintf(format, args...)}
}

// Of is the refusal err is or wraps (the outermost), or false when err is
// no refusal: a failure, whose text is for the log.
func Of(err error) (*Error, bool) {
	var r *Error
	if errors.As(err, &r) {
		return r, true
	}
	return nil, false
}
