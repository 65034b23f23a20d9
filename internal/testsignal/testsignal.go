// Package testsignal lets a test wait for a step of a background loop
// instead of polling for its effect or sleeping (river's testsignal). A
// Signal is a field of the loop's own struct, inert until a test calls
// Init: then every value the loop sends is kept for the test, in order.
//
// A signal fails its test rather than mislead it: a wait that times out
// fails it, and so does a loop that sends more values than the signal
// holds (a test that stopped reading while the loop ran on), instead of
// dropping them.
package testsignal

import (
	"fmt"
	"time"
)

// TB is the part of testing.TB a signal uses, so that the loops importing
// this package do not import testing.
type TB interface {
	Helper()
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
}

// Capacity is how many unread values a signal holds.
const Capacity = 10_000

// Signal is one kind of progress a test can wait for.
type Signal[T any] struct {
	ch chan T
	tb TB
}

// Init makes the signal keep what the loop sends, for tb. Call it before
// the loop starts.
func (s *Signal[T]) Init(tb TB) {
	s.ch = make(chan T, Capacity)
	s.tb = tb
}

// Signal sends v to the test, never blocking the loop; a signal no test
// initialised costs a nil check. A full signal fails the test.
func (s *Signal[T]) Signal(v T) {
	if s.ch == nil {
		return
	}
	select {
	case s.ch <- v:
	default:
		s.tb.Errorf("test signal overflowed: %d values unread (the test stopped reading while the loop went on)", Capacity)
	}
}

// WaitOrTimeout returns the next value, failing the test when none comes
// within timeout; what says what was waited for.
func (s *Signal[T]) WaitOrTimeout(timeout time.Duration, what string) T {
	s.tb.Helper()
	v, ok := s.next(timeout)
	if !ok {
		s.tb.Fatalf("no signal within %s: %s", timeout, what)
	}
	return v
}

// WaitUntil returns the first value for which match is true, skipping the
// others, failing the test when none comes within timeout.
func (s *Signal[T]) WaitUntil(timeout time.Duration, what string, match func(T) bool) T {
	s.tb.Helper()
	deadline := time.Now().Add(timeout)
	for {
		v, ok := s.next(time.Until(deadline))
		if !ok {
			s.tb.Fatalf("no signal within %s: %s", timeout, what)
			return v
		}
		if match(v) {
			return v
		}
	}
}

// RequireNone fails the test when a value comes within d: for a loop that
// must not take a step while it runs d.
func (s *Signal[T]) RequireNone(d time.Duration, what string) {
	s.tb.Helper()
	if v, ok := s.next(d); ok {
		s.tb.Fatalf("signal within %s, want none: %s (got %s)", d, what, fmt.Sprint(v))
	}
}

// Sent returns the values sent and not read yet, in order, without
// waiting: what a loop reported while the test waited for something else.
func (s *Signal[T]) Sent() []T {
	if s.ch == nil {
		panic("testsignal: read of a signal never initialised")
	}
	var out []T
	for {
		select {
		case v := <-s.ch:
			out = append(out, v)
		default:
			return out
		}
	}
}

func (s *Signal[T]) next(timeout time.Duration) (T, bool) {
	if s.ch == nil {
		panic("testsignal: wait on a signal never initialised")
	}
	select {
	case v := <-s.ch: // a value waiting wins over a timeout already due
		return v, true
	default:
	}
	t := time.NewTimer(max(timeout, 0))
	defer t.Stop()
	select {
	case v := <-s.ch:
		return v, true
	case <-t.C:
		var zero T
		return zero, false
	}
}
