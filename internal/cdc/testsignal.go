package cdc

import (
	"github.com/jackc/pglogrepl"

	"github.com/sluicehq/sluice/internal/testsignal"
)

// testSignals are the relay's, inert until a test calls init before the
// relay runs.
type testSignals struct {
	streaming testsignal.Signal[pglogrepl.LSN] // a session streams from this position (its slot exists and is recorded)
	retained  testsignal.Signal[int64]         // a retention pass ended, having removed this many rows
}

func (ts *testSignals) init(tb testsignal.TB) {
	ts.streaming.Init(tb)
	ts.retained.Init(tb)
}
