package consumers

import (
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestSignals let a test wait for a worker's progress instead of polling
// for its effects (river's test signals). Nil in production: a signal
// nobody initialised costs a nil check.
type TestSignals struct {
	// Attempted receives the outcome of every attempt at a batch: nil once
	// it committed (alone or shared with other partitions' batches), else
	// its error, after the retry policy counted it. A shared transaction
	// that failed is no batch's attempt (each is then applied alone).
	Attempted Signal[error]
	// Marked receives a batch's last record once its transaction committed
	// and its offset was marked for the next commit to Kafka.
	Marked Signal[*kgo.Record]
}

// NewTestSignals returns initialised signals, for Config.Signals.
func NewTestSignals() *TestSignals {
	s := &TestSignals{}
	s.Attempted.init()
	s.Marked.init()
	return s
}

// Signal is one kind of progress a test can wait for.
type Signal[T any] struct{ ch chan T }

func (s *Signal[T]) init() { s.ch = make(chan T, 1000) }

// signal never blocks a worker: a test that stopped listening loses what
// no longer fits.
func (s *Signal[T]) signal(v T) {
	if s.ch == nil {
		return
	}
	select {
	case s.ch <- v:
	default:
	}
}

// Wait returns the next value, or false after timeout.
func (s *Signal[T]) Wait(timeout time.Duration) (T, bool) {
	select {
	case v := <-s.ch:
		return v, true
	case <-time.After(timeout):
		var zero T
		return zero, false
	}
}
