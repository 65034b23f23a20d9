package refusal_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/sluicehq/sluice/internal/refusal"
)

var (
	errQuota   = refusal.Sub(refusal.Conflict, "quota", "over quota")
	errReplay  = refusal.Sub(refusal.Conflict, "already_replayed", "replayed already")
	errMissing = refusal.Sub(refusal.NotFound, "provider_object", "no such object")
)

// A kind's sentinel matches every refusal of its kind, a sub-kind's only
// its own; a plain refusal (not a sentinel) matches only itself.
func TestASentinelMatchesItsKindAndItsSubKindOnly(t *testing.T) {
	t.Parallel()
	quota := errQuota.With("tenant t has 5 types")
	plain := refusal.New(refusal.Conflict, "a name taken")
	wrapped := fmt.Errorf("create: %w", quota)
	for _, c := range []struct {
		err, target error
		want        bool
	}{
		{quota, refusal.ErrConflict, true},
		{wrapped, refusal.ErrConflict, true},
		{wrapped, errQuota, true},
		{quota, errReplay, false},           // another sub-kind of the kind
		{plain, errQuota, false},            // the kind without the sub-kind
		{plain, refusal.ErrConflict, true},  // the kind
		{quota, refusal.ErrNotFound, false}, // another kind
		{errMissing, refusal.ErrNotFound, true},
		{refusal.NoSuch("tenant", "t"), refusal.ErrNotFound, true},
		{refusal.ErrConflict, errQuota, false}, // a kind's sentinel is no sub-kind
		{quota, plain, false},                  // a refusal that is no sentinel matches only itself
		{errors.New("conflict"), refusal.ErrConflict, false},
	} {
		if got := errors.Is(c.err, c.target); got != c.want {
			t.Errorf("errors.Is(%q, %q) = %v, want %v", c.err, c.target, got, c.want)
		}
	}
}

// Of finds the refusal an error carries, however wrapped or joined; a
// failure carries none.
func TestOfFindsTheRefusalAnErrorCarries(t *testing.T) {
	t.Parallel()
	field := refusal.InvalidField("limit", "must be between %d and %d", 1, 500)
	if field.Error() != "limit: must be between 1 and 500" || field.Name() != "invalid" {
		t.Errorf("InvalidField: %q named %q", field.Error(), field.Name())
	}
	if r, ok := refusal.Of(errors.Join(errors.New("SQLSTATE 40001"), errQuota.With("over"))); !ok || r.Name() != "quota" || r.Kind != refusal.Conflict {
		t.Errorf("joined: %v %v", r, ok)
	}
	if r, ok := refusal.Of(fmt.Errorf("dead letter 7: %w", errReplay)); !ok || r != errReplay {
		t.Errorf("wrapped sentinel: %v %v", r, ok)
	}
	if _, ok := refusal.Of(fmt.Errorf("read: %w", errors.New("connection reset"))); ok {
		t.Error("a failure read as a refusal")
	}
	for _, k := range refusal.Kinds() {
		if s := refusal.Sentinel(k); s.Kind != k || !errors.Is(refusal.New(k, "no"), s) {
			t.Errorf("kind %s: sentinel %v", k, s)
		}
	}
}
