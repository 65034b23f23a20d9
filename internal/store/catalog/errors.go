package catalog

import (
	"fmt"

	"github.com/sluicehq/sluice/internal/refusal"
)

// The catalogue refuses in internal/refusal's words: refusal.Invalid for a
// request that is wrong (a name, a pointer, a schema that does not compile,
// a remote $ref, a schema too large: fix it), refusal.NotFound for no such
// tenant or type, refusal.Conflict for another version created meanwhile
// (run again), and three conflicts of their own, which the admin API
// answers with their own problem types and -o json with their own codes.
var (
	// ErrBuiltin: the name is a built-in type of that source kind, which
	// Sluice validates and routes already. Pick another name.
	ErrBuiltin = refusal.Sub(refusal.Conflict, "builtin", "a built-in event type")
	// ErrQuota: the tenant has as many types as it may.
	ErrQuota = refusal.Sub(refusal.Conflict, "quota", "the tenant's quota of event types")
	// ErrIncompatible: a version declared compatible would refuse events
	// the previous version accepted (IncompatibleError says which).
	ErrIncompatible = refusal.Sub(refusal.Conflict, "incompatible", "an incompatible version")
)

// IncompatibleError is the refusal of a version declared compatible that
// would refuse stored events the previous version accepted: how many, of
// those checked, and a few of them with the reason. It wraps
// ErrIncompatible.
type IncompatibleError struct {
	Refused, Checked int
	Examples         []Refusal
	Message          string
}

func (e *IncompatibleError) Error() string { return e.Message }

// Unwrap makes it a refusal: ErrIncompatible.
func (e *IncompatibleError) Unwrap() error { return ErrIncompatible }

// Refusal is one stored event a new version would refuse.
type Refusal struct {
	InboxID int64  `json:"inbox_id"`
	EventID string `json:"event_id"`
	Reason  string `json:"reason"`
}

func invalid(field, format string, args ...any) *refusal.Error {
	return refusal.InvalidField(field, format, args...)
}

func conflict(format string, args ...any) *refusal.Error {
	return refusal.New(refusal.Conflict, format, args...)
}

// noTenant is the refusal of a spec naming a tenant that does not exist.
func noTenant(id string) *refusal.Error {
	return &refusal.Error{Kind: refusal.NotFound, Field: "tenant", Message: fmt.Sprintf("no tenant %s", id)}
}
