package consumers

import (
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicehq/sluice/internal/testsignal"
)

// TestSignals let a test wait for a worker's progress instead of polling
// for its effects (internal/testsignal). Nil in production: a signal
// nobody initialised costs a nil check.
type TestSignals struct {
	// Attempted receives the outcome of every attempt at a batch: nil once
	// it committed (alone or shared with other partitions' batches), else
	// its error, after the retry policy counted it. A shared transaction
	// that failed is no batch's attempt (each is then applied alone).
	Attempted testsignal.Signal[error]
	// Marked receives a batch's last record once its transaction committed
	// and its offset was marked for the next commit to Kafka.
	Marked testsignal.Signal[*kgo.Record]
	// Crash, when set, is asked after each batch's transaction committed,
	// with its last record, whether the process dies there: true stops the
	// group at once, that batch's offset never marked and nothing more
	// committed to Kafka, as a kill between the two commits leaves it (the
	// next owner applies the batch again).
	Crash func(last *kgo.Record) bool
}

// NewTestSignals returns signals initialised for tb, for Config.Signals.
func NewTestSignals(tb testsignal.TB) *TestSignals {
	s := &TestSignals{}
	s.Attempted.Init(tb)
	s.Marked.Init(tb)
	return s
}
