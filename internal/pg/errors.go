package pg

import (
	"errors"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5/pgconn"
)

// Fault says who is at fault when Postgres refuses a statement, and so what
// every stage does about it. It is decided here, once, from the SQLSTATE
// class (pgconn's own errors.go is the model): ingest, the relay and the
// consumers must not disagree about the same error.
type Fault int

const (
	// FaultNone: err is nil.
	FaultNone Fault = iota
	// FaultTransient: the connection, the server's load or a conflict with
	// another transaction; the same statement may pass in a moment. Retry
	// with backoff, never give up, never skip.
	FaultTransient
	// FaultData: the rows themselves (a value out of range, a constraint no
	// ON CONFLICT handles, a value over a limit); the same rows fail again.
	// Refuse them (ingest) or dead-letter them (consumers).
	FaultData
	// FaultDeployment: the deployment, not the data (a missing table or
	// column after a bad deploy, a revoked privilege, a corrupt index).
	// Retry with backoff and tell an operator; dead-lettering would throw a
	// whole stream away for a fault the next deploy fixes.
	FaultDeployment
)

func (f Fault) String() string {
	switch f {
	case FaultNone:
		return "none"
	case FaultTransient:
		return "transient"
	case FaultData:
		return "data"
	case FaultDeployment:
		return "deployment"
	}
	return "unknown"
}

// Classify decides the fault of err. Errors that are not from Postgres
// (network, timeouts, a closed pool, anything unknown) are transient: a
// retry costs a moment, a wrong refusal loses an event.
func Classify(err error) Fault {
	if err == nil {
		return FaultNone
	}
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		return FaultTransient
	}
	code := pgErr.Code
	switch {
	case pgerrcode.IsDataException(code),
		pgerrcode.IsIntegrityConstraintViolation(code),
		pgerrcode.IsProgramLimitExceeded(code),
		pgerrcode.IsCardinalityViolation(code),
		pgerrcode.IsTriggeredDataChangeViolation(code),
		pgerrcode.IsWithCheckOptionViolation(code):
		return FaultData
	case pgerrcode.IsSyntaxErrororAccessRuleViolation(code),
		pgerrcode.IsInvalidCatalogName(code),
		pgerrcode.IsInvalidSchemaName(code),
		pgerrcode.IsInvalidAuthorizationSpecification(code),
		pgerrcode.IsFeatureNotSupported(code),
		pgerrcode.IsInternalError(code):
		return FaultDeployment
	}
	// Connection exceptions (08), transaction rollbacks (40: serialization,
	// deadlock), insufficient resources (53: too many connections, disk
	// full), operator intervention (57: shutdown, cancel), system errors
	// (58), objects in use (55) and classes not named above.
	return FaultTransient
}

// Violation names the constraint err broke (a unique key, a foreign key, a
// check), so a caller can say what clashed in its own words instead of
// passing the server's text on; ok is false for any other error.
func Violation(err error) (constraint string, ok bool) {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || !pgerrcode.IsIntegrityConstraintViolation(pgErr.Code) {
		return "", false
	}
	return pgErr.ConstraintName, true
}

// IsFromPostgres reports whether err carries the server's own error (its
// SQLSTATE and text): what must never be shown to a person as is.
func IsFromPostgres(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr)
}

// LockNotGranted reports whether Postgres gave up on a lock for err's
// statement: its lock timeout passed (lock_not_available) or it was a
// deadlock's victim. The same statement may be granted its locks once the
// sessions holding them are done.
func LockNotGranted(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == pgerrcode.LockNotAvailable || pgErr.Code == pgerrcode.DeadlockDetected)
}
