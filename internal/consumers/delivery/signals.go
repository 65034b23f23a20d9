package delivery

import "github.com/sluicehq/sluice/internal/testsignal"

// TestSignals let a test wait for a deliverer's steps instead of polling
// for their effects (internal/testsignal). Nil in production.
type TestSignals struct {
	// Checked receives every check of a proposed mark (mark.go).
	Checked testsignal.Signal[MarkCheck]
}

// MarkCheck is one check of an endpoint's proposed mark.
type MarkCheck struct {
	EndpointID string
	// Proposed is the mark proposed; Ripe says whether every transaction
	// running at its snapshot had ended (only then was it checked and
	// written); Low is the endpoint's mark after the check.
	Proposed, Low int64
	Ripe          bool
}

// NewTestSignals returns signals initialised for tb, for Config.Signals.
func NewTestSignals(tb testsignal.TB) *TestSignals {
	s := &TestSignals{}
	s.Checked.Init(tb)
	return s
}
