package cdc

import "github.com/jackc/pglogrepl"

// testSignal lets a test wait for a step of a background loop instead of
// polling for its effect (river's testsignal). It is inert until init,
// which only tests call, before the relay runs.
type testSignal[T any] struct{ ch chan T }

func (s *testSignal[T]) init() { s.ch = make(chan T, 1000) }

// signal never blocks the loop: a test that stopped reading loses signals,
// not the relay.
func (s *testSignal[T]) signal(v T) {
	if s.ch == nil {
		return
	}
	select {
	case s.ch <- v:
	default:
	}
}

// testSignals are the relay's.
type testSignals struct {
	streaming testSignal[pglogrepl.LSN] // a session streams from this position (its slot exists and is recorded)
	retained  testSignal[int64]         // a retention pass ended, having removed this many rows
}

func (ts *testSignals) init() {
	ts.streaming.init()
	ts.retained.init()
}
