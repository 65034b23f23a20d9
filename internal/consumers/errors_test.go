package consumers

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

func TestErrorsAreClassifiedOnce(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		err       error
		permanent bool
	}{
		"marked":          {fmt.Errorf("handler: %w", Permanentf("no workspace for customer")), true},
		"check violation": {&pgconn.PgError{Code: "23514"}, true},
		// A deployment at fault is retried: a missing column after a bad
		// deploy must not dead-letter the stream.
		"undefined column":       {&pgconn.PgError{Code: "42703"}, false},
		"internal error":         {&pgconn.PgError{Code: "XX000"}, false},
		"serialization failure":  {&pgconn.PgError{Code: "40001"}, false},
		"admin shutdown":         {&pgconn.PgError{Code: "57P01"}, false},
		"too many connections":   {&pgconn.PgError{Code: "53300"}, false},
		"deadline":               {context.DeadlineExceeded, false},
		"unmarked handler error": {errors.New("dependency said 503"), false},
	}
	for name, tc := range cases {
		if got := IsPermanent(tc.err); got != tc.permanent {
			t.Errorf("%s: permanent = %v, want %v", name, got, tc.permanent)
		}
	}
}
