package catalog

import "fmt"

// Code says what kind of refusal an *Error is, for a caller to branch on
// (an HTTP API maps it to a status).
type Code string

const (
	// CodeInvalid: the request itself is wrong (a name, a pointer, a schema
	// that does not compile, a remote $ref, a schema too large). Fix it.
	CodeInvalid Code = "invalid"
	// CodeBuiltin: the name is a built-in type of that source kind, which
	// Sluice validates and routes already. Pick another name.
	CodeBuiltin Code = "builtin"
	// CodeQuota: the tenant has as many types as it may.
	CodeQuota Code = "quota"
	// CodeNotFound: no such tenant or type.
	CodeNotFound Code = "not_found"
	// CodeIncompatible: a version declared compatible would refuse events
	// the previous version accepted (Refused of Checked).
	CodeIncompatible Code = "incompatible"
	// CodeConflict: another version was created meanwhile; run again.
	CodeConflict Code = "conflict"
)

// Error is every refusal of the catalogue's operations. Its message names
// what to change; it never carries SQLSTATEs or driver text (those are
// wrapped errors of their own, for failures no caller can fix).
type Error struct {
	Code    Code
	Field   string // the Spec field at fault, when one is
	Message string
	// Set for CodeIncompatible: events the new schema would refuse, of
	// those checked, and a few of them with the reason.
	Refused, Checked int
	Examples         []Refusal
}

// Refusal is one stored event a new version would refuse.
type Refusal struct {
	InboxID int64  `json:"inbox_id"`
	EventID string `json:"event_id"`
	Reason  string `json:"reason"`
}

func (e *Error) Error() string {
	if e.Field != "" {
		return e.Field + ": " + e.Message
	}
	return e.Message
}

// Is matches the sentinel of the same code (errors.Is(err, ErrQuota)).
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Message == "" && t.Code == e.Code
}

// Sentinels for errors.Is.
var (
	ErrInvalid      = &Error{Code: CodeInvalid}
	ErrBuiltin      = &Error{Code: CodeBuiltin}
	ErrQuota        = &Error{Code: CodeQuota}
	ErrNotFound     = &Error{Code: CodeNotFound}
	ErrIncompatible = &Error{Code: CodeIncompatible}
	ErrConflict     = &Error{Code: CodeConflict}
)

func invalid(field, format string, args ...any) *Error {
	return &Error{Code: CodeInvalid, Field: field, Message: fmt.Sprintf(format, args...)}
}
