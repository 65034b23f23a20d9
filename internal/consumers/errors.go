package consumers

import (
	"errors"
	"fmt"
	"time"

	"github.com/sluicehq/sluice/internal/pg"
)

// permanentError marks a failure that retrying cannot fix.
type permanentError struct{ err error }

func (e permanentError) Error() string { return e.err.Error() }
func (e permanentError) Unwrap() error { return e.err }

// Permanent marks err as a failure no retry can fix (bad data, no mapped
// workspace, a handler bug): after MaxAttempts the record is dead-lettered.
// Errors not marked are transient unless Postgres says the data is at fault.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return permanentError{err}
}

// Permanentf is Permanent(fmt.Errorf(...)).
func Permanentf(format string, args ...any) error {
	return Permanent(fmt.Errorf(format, args...))
}

// IsPermanent decides whether an error is worth retrying in place.
// Permanent: marked errors, and Postgres errors that blame the data
// (pg.FaultData). Everything else is retried without giving up and never
// skipped, including a deployment at fault (a missing table after a bad
// deploy): dead-lettering would throw a whole stream away for it.
func IsPermanent(err error) bool {
	var p permanentError
	if errors.As(err, &p) {
		return true
	}
	return pg.Classify(err) == pg.FaultData
}

// PermanentReason is the words of the failure err was marked Permanent
// for (what a dead letter's reason says), without the wrappers around it;
// false when err is not marked (a Postgres refusal of the data is
// permanent too, but its words are the database's).
func PermanentReason(err error) (string, bool) {
	var p permanentError
	if errors.As(err, &p) {
		return p.err.Error(), true
	}
	return "", false
}

// retryAfterError is a transient failure whose cause said when to come back
// (an HTTP 429 or 503 with Retry-After).
type retryAfterError struct {
	err   error
	delay time.Duration
}

func (e retryAfterError) Error() string { return e.err.Error() }
func (e retryAfterError) Unwrap() error { return e.err }

// RetryAfter marks err as transient with a delay the retry must not beat:
// the worker waits the longer of its own backoff and d.
func RetryAfter(err error, d time.Duration) error {
	if err == nil {
		return nil
	}
	return retryAfterError{err: err, delay: d}
}

// RetryDelay is the delay a RetryAfter error asked for.
func RetryDelay(err error) (time.Duration, bool) {
	var r retryAfterError
	if errors.As(err, &r) {
		return r.delay, true
	}
	return 0, false
}
