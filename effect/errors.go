package effect

import (
	"errors"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicehq/sluice/internal/consumers"
)

// How a failure is decided: a handler says what kind it is, the runtime
// decides what follows, once.
//
//   - An error a handler returns unmarked is transient: the batch is
//     retried in place with backoff, its partition waiting, without giving
//     up and without skipping (a database restarting, a dependency down).
//   - Permanent marks a failure no retry can fix (bad data, a mapping that
//     does not exist yet): after the group's MaxAttempts the record
//     becomes a dead letter with the reason, and its partition flows on.
//     Postgres errors that blame the data (a check constraint, an invalid
//     value) are permanent unmarked.
//   - RecordFailed and RecordsFailed name which records of a set-based
//     Apply a failure belongs to; a permanent failure naming none makes
//     the runtime apply the batch again one record at a time to find it.
//   - Blocked names records that need what another transaction holds: they
//     are set aside and retried while the rest of the batch is applied.

// Permanent marks err as a failure no retry can fix.
func Permanent(err error) error { return consumers.Permanent(err) }

// Permanentf is Permanent(fmt.Errorf(format, args...)).
func Permanentf(format string, args ...any) error { return consumers.Permanentf(format, args...) }

// IsPermanent says whether err was marked Permanent.
func IsPermanent(err error) bool {
	_, ok := consumers.PermanentReason(err)
	return ok
}

// RetryAfter marks err as transient with a delay its retry must not beat
// (a remote service said when to come back).
func RetryAfter(err error, d time.Duration) error { return consumers.RetryAfter(err, d) }

// RecordFailed says err is the fault of recs[i] of the call to Apply that
// received recs, keeping err's kind.
func RecordFailed(i int, err error) error { return consumers.RecordFailed(i, err) }

// RecordsFailed says several records of the call to Apply failed for
// good, errs[i] the fault of recs[i]: a set-based handler that finds many
// bad records with one statement names them all, and the runtime
// dead-letters each with its own reason in one more attempt.
func RecordsFailed(errs map[int]error) error { return consumers.RecordsFailed(errs) }

// Blocked says err is a wait on something held elsewhere (a row another
// transaction locked) that recs need and the rest of the batch does not.
// The runtime rolls the transaction back, applies the batch again with
// recs and every later record of their keys set aside, and applies those
// once a retry finds them free; their offsets move on meanwhile. Return it
// from Apply or Settle.
func Blocked(err error, recs ...Record) error {
	if err == nil {
		return nil
	}
	krs := make([]*kgo.Record, 0, len(recs))
	for _, r := range recs {
		if r.rec != nil {
			krs = append(krs, r.rec.Record)
		}
	}
	return consumers.Blocked(err, krs...)
}

// ErrKeyTaken: an operation's business key was recorded before with other
// content (Once with Same): its effect is not applied again, and the
// record is a dead letter for an operator to read rather than silence.
var ErrKeyTaken = errors.New("effect: business key taken with other content")
