package testsignal_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/testsignal"
)

// recorder is a TB that notes failures instead of ending the test.
type recorder struct {
	errors, fatals []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(f string, a ...any) {
	r.errors = append(r.errors, fmt.Sprintf(f, a...))
}
func (r *recorder) Fatalf(f string, a ...any) {
	r.fatals = append(r.fatals, fmt.Sprintf(f, a...))
}

func TestASignalKeepsValuesInOrderAndFailsOnTimeoutOrOverflow(t *testing.T) {
	t.Parallel()
	var s testsignal.Signal[int]
	s.Signal(1) // not initialised: nothing happens
	rec := &recorder{}
	s.Init(rec)
	for i := range 3 {
		s.Signal(i)
	}
	if v := s.WaitOrTimeout(time.Second, "first"); v != 0 {
		t.Fatalf("first value %d, want 0", v)
	}
	if v := s.WaitUntil(time.Second, "the last", func(v int) bool { return v == 2 }); v != 2 {
		t.Fatalf("matched %d, want 2", v)
	}
	s.RequireNone(10*time.Millisecond, "nothing more")
	if len(rec.fatals) != 0 {
		t.Fatalf("failed: %v", rec.fatals)
	}
	s.WaitOrTimeout(10*time.Millisecond, "a value never sent")
	if len(rec.fatals) != 1 {
		t.Fatalf("a timed-out wait did not fail the test: %v", rec.fatals)
	}
	for range testsignal.Capacity + 1 {
		s.Signal(7)
	}
	if len(rec.errors) != 1 {
		t.Fatalf("an overflow failed the test %d times, want once: %v", len(rec.errors), rec.errors)
	}
	s.Signal(8)
	s.RequireNone(0, "")
	if len(rec.fatals) != 2 {
		t.Fatalf("RequireNone with a value waiting did not fail the test")
	}
}
