package operate

import (
	"fmt"
	"strings"

	"github.com/sluicehq/sluice/command/internal/operator/input"
	"github.com/sluicehq/sluice/internal/consumers"
	"github.com/sluicehq/sluice/internal/refusal"
)

// An operation refuses in internal/refusal's words, which the admin API
// and the CLI map once: an id that names nothing (or another tenant's) is
// refusal.NotFound, a wrong id, cursor or filter refusal.Invalid naming the
// field, an operation spanning tenants asked by a scoped caller
// refusal.Forbidden, a Kafka operation on an operator without a client
// refusal.Unavailable. A dead letter replayed before is
// consumers.ErrAlreadyReplayed, one deleted since
// consumers.ErrDeadLetterExpired, a rewind of a group with members
// offsets.ErrGroupActive.

// ErrReplayFailed: a replayed dead letter failed again, for good (its
// data, not the moment: a retry fails alike); ReplayError says why.
var ErrReplayFailed = refusal.Sub(refusal.Invalid, "replay_failed", "dead letter failed again")

// ReplayError is a replay stopped by a letter that failed again; it wraps
// ErrReplayFailed.
type ReplayError struct {
	ID     int64  // the letter that failed; it stays pending
	Reason string // the handler's words, as a dead letter's reason
	// Replayed are the letters a filtered replay applied before it.
	Replayed []int64
}

func (e *ReplayError) Error() string {
	return fmt.Sprintf("dead letter %d failed again: %s", e.ID, e.Reason)
}

// Unwrap makes the replay's failure a refusal: ErrReplayFailed.
func (e *ReplayError) Unwrap() error { return ErrReplayFailed }

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

func notFound(what string, id any) error { return refusal.NoSuch(what, id) }

// NoSuchGroup is the refusal of a consumer group name that is none of
// known: it lists them, being no one tenant's secret (what a person types
// next).
func NoSuchGroup(name string, known []string) error {
	return refusal.New(refusal.NotFound, "no consumer group %s (there are: %s)", name, strings.Join(known, ", "))
}

func invalid(field, format string, args ...any) error {
	return refusal.InvalidField(field, format, args...)
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
		return refusal.New(refusal.Forbidden, "needs an unscoped caller: it spans tenants")
	}
	return nil
}

// noKafka refuses a Kafka operation of an operator built without a client
// (a process that runs ingest only).
func noKafka() error {
	return refusal.New(refusal.Unavailable, "this process has no Kafka client (it runs ingest only): ask the admin listener of a process that runs cdc or consume")
}
