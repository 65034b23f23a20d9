package consumers

import (
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"
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

// IsPermanent decides, once, whether an error is worth retrying in place.
// Transient (retried without giving up, never skipped): connection loss,
// timeouts, serialization failures, deadlocks, an overloaded or restarting
// server, and anything unmarked. Permanent: marked errors and Postgres
// errors that blame the data or the statement.
func IsPermanent(err error) bool {
	var p permanentError
	if errors.As(err, &p) {
		return true
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && len(pgErr.Code) >= 2 {
		switch pgErr.Code[:2] {
		case "22", // data exception
			"23", // integrity constraint violation
			"42", // syntax error or access rule violation
			"XX": // internal error
			return true
		}
	}
	return false
}
