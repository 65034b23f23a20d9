package pg

import (
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5/pgconn"
)

func TestClassifyNamesWhoIsAtFault(t *testing.T) {
	t.Parallel()
	pgErr := func(code string) error {
		// Wrapped as callers wrap it: the class must survive %w.
		return fmt.Errorf("apply batch: %w", &pgconn.PgError{Code: code})
	}
	cases := map[string]struct {
		err  error
		want Fault
	}{
		"nil":                      {nil, FaultNone},
		"connection lost":          {io.ErrUnexpectedEOF, FaultTransient},
		"not from postgres":        {errors.New("boom"), FaultTransient},
		"connection failure":       {pgErr(pgerrcode.ConnectionFailure), FaultTransient},
		"serialization failure":    {pgErr(pgerrcode.SerializationFailure), FaultTransient},
		"deadlock":                 {pgErr(pgerrcode.DeadlockDetected), FaultTransient},
		"admin shutdown":           {pgErr(pgerrcode.AdminShutdown), FaultTransient},
		"too many connections":     {pgErr(pgerrcode.TooManyConnections), FaultTransient},
		"disk full":                {pgErr(pgerrcode.DiskFull), FaultTransient},
		"lock not available":       {pgErr(pgerrcode.LockNotAvailable), FaultTransient},
		"numeric out of range":     {pgErr(pgerrcode.NumericValueOutOfRange), FaultData},
		"invalid text":             {pgErr(pgerrcode.InvalidTextRepresentation), FaultData},
		"unique violation":         {pgErr(pgerrcode.UniqueViolation), FaultData},
		"check violation":          {pgErr(pgerrcode.CheckViolation), FaultData},
		"index row too large":      {pgErr(pgerrcode.ProgramLimitExceeded), FaultData},
		"upsert touches row twice": {pgErr(pgerrcode.CardinalityViolation), FaultData},
		"undefined table":          {pgErr(pgerrcode.UndefinedTable), FaultDeployment},
		"undefined column":         {pgErr(pgerrcode.UndefinedColumn), FaultDeployment},
		"insufficient privilege":   {pgErr(pgerrcode.InsufficientPrivilege), FaultDeployment},
		"undefined function":       {pgErr(pgerrcode.UndefinedFunction), FaultDeployment},
		"index corrupted":          {pgErr(pgerrcode.IndexCorrupted), FaultDeployment},
	}
	for name, tc := range cases {
		if got := Classify(tc.err); got != tc.want {
			t.Errorf("%s: %s, want %s", name, got, tc.want)
		}
	}
}
