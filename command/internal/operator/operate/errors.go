package operate

import (
	"errors"
	"fmt"
	"strings"

	"github.com/sluicehq/sluice/command/internal/operator/input"
	"github.com/sluicehq/sluice/internal/consumers"
	"github.com/sluicehq/sluice/internal/consumers/offsets"
)

// The classes of failure an operation returns, for errors.Is; the API maps
// each to one status (404, 400, 409, 403).
var (
	// ErrNotFound: no such id, or one another tenant owns (a scoped caller
	// cannot tell the two apart).
	ErrNotFound = errors.New("not found")
	// ErrInvalid: the request itself is wrong (a malformed id, cursor or
	// filter); InvalidError names the field.
	ErrInvalid = errors.New("invalid request")
	// ErrUnscopedOnly: the operation spans tenants; a tenant-scoped caller
	// may not run it.
	ErrUnscopedOnly = errors.New("needs an unscoped caller: it spans tenants")
	// ErrAlreadyReplayed: the dead letter was replayed before.
	ErrAlreadyReplayed = consumers.ErrAlreadyReplayed
	// ErrGroupActive: a rewind of a group with members.
	ErrGroupActive = offsets.ErrGroupActive
	// ErrNoKafka: a Kafka operation on an operator built without a client.
	ErrNoKafka = errors.New("no Kafka client: this operation needs one")
)

// ErrReplayFailed: a replayed dead letter failed again, for good (its
// data, not the moment: a retry fails alike); ReplayError says why.
var ErrReplayFailed = errors.New("dead letter failed again")

// ErrDeadLetterExpired: the dead letter was replayed and deleted since.
var ErrDeadLetterExpired = consumers.ErrDeadLetterExpired

// ReplayError is a replay stopped by a letter that failed again.
type ReplayError struct {
	ID     int64  // the letter that failed; it stays pending
	Reason string // the handler's words, as a dead letter's reason
	// Replayed are the letters a filtered replay applied before it.
	Replayed []int64
}

func (e *ReplayError) Error() string {
	return fmt.Sprintf("dead letter %d failed again: %s", e.ID, e.Reason)
}
func (e *ReplayError) Is(target error) bool { return target == ErrReplayFailed }

// failedAgain turns a permanent failure of a replay into a ReplayError;
// any other error stays as it is (transient: the caller may retry).
func failedAgain(id int64, err error, replayed []int64) error {
	if !consumers.IsPermanent(err) {
		return err
	}
	reason, ok := consumers.PermanentReason(err)
	if !ok {
		reason = "the database refused its data (the process log has its words)"
	}
	return &ReplayError{ID: id, Reason: reason, Replayed: replayed}
}

// NotFoundError names what was not found.
type NotFoundError struct {
	What string // "event", "dead letter", "consumer group"...
	ID   string
	// Known lists what does exist, where that is no one tenant's secret
	// (the deployment's consumer groups): what a person types next.
	Known []string
}

// Error reads as tenancy's do ("no source <id>"), so the CLI and the API
// speak one way.
func (e *NotFoundError) Error() string {
	if len(e.Known) > 0 {
		return fmt.Sprintf("no %s %s (there are: %s)", e.What, e.ID, strings.Join(e.Known, ", "))
	}
	return fmt.Sprintf("no %s %s", e.What, e.ID)
}
func (e *NotFoundError) Is(target error) bool { return target == ErrNotFound }

func notFound(what string, id any) error { return &NotFoundError{What: what, ID: fmt.Sprint(id)} }

// InvalidError names the field at fault and why.
type InvalidError struct {
	Field, Reason string
}

func (e *InvalidError) Error() string        { return e.Field + ": " + e.Reason }
func (e *InvalidError) Is(target error) bool { return target == ErrInvalid }

func invalid(field, format string, args ...any) error {
	return &InvalidError{Field: field, Reason: fmt.Sprintf(format, args...)}
}

// checkUUID refuses a malformed id before it reaches Postgres (whose
// refusal would be a driver error, not an answer).
func checkUUID(field, v string) error {
	if v == "" {
		return nil
	}
	if !input.IsUUID(v) {
		return invalid(field, "%q is not a canonical uuid (lowercase, 8-4-4-4-12)", v)
	}
	return nil
}

func unscopedOnly(scope *Scope) error {
	if scope != nil {
		return ErrUnscopedOnly
	}
	return nil
}
