package effecttest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicehq/sluice/internal/consumers"
	"github.com/sluicehq/sluice/internal/consumers/consumertest"
)

// options are what a scenario asks of one run of the suite's group.
type options struct {
	group     string // its consumer group id; "": a new one
	maxBatch  int    // the most records per transaction; 0: the default
	crash     bool   // dies between its first transaction's commit and its offsets'
	failFirst int    // its first transactions fail, transiently
	contend   bool   // many transactions at once
}

// consumer is the suite's group running in a scenario: in this process,
// through Sluice's runtime, or as the suite's Process.
type consumer interface {
	// ID is its consumer group id.
	ID() string
	// WaitCommitted waits until the group committed past recs.
	WaitCommitted(t *testing.T, timeout time.Duration, recs ...*kgo.Record)
	// WaitAttempt waits for a transaction attempt, committed or not.
	WaitAttempt(t *testing.T, what string)
	// WaitCrashed waits for the crash options.crash asked for.
	WaitCrashed(t *testing.T)
	// Stop stops it after its batches in flight.
	Stop(t *testing.T)
	// Failures counts its failed transaction attempts so far, and those
	// that failed on a lock (a deadlock, a lock wait timed out).
	Failures(t *testing.T) (failed, onLocks int)
	// DeadLetters are the records it set aside for good.
	DeadLetters(t *testing.T) []deadLetter
}

// deadLetter is a record a group set aside for good.
type deadLetter struct {
	partition int32
	offset    int64
	reason    string
}

// start runs the suite's group over the scenario's topic.
func (b *bundle) start(t *testing.T, s Suite, o options) consumer {
	t.Helper()
	if s.Process != nil {
		return startProcesses(t, b, s, o)
	}
	return startGroup(t, b, s, o)
}

// groupID is a new consumer group id for a run of s's group.
func groupID(b *bundle, s Suite) string {
	return fmt.Sprintf("%s.%s.%d", b.topic, s.name(), rand.Uint32())
}

// inProcess is the suite's Group run by Sluice's consumer runtime, with
// handlers around it that count what the scenario asks for.
type inProcess struct {
	*consumertest.Running
	b       *bundle
	crashed *atomic.Bool
	flaky   *consumertest.Flaky
	watch   *lockWatch
}

func startGroup(t *testing.T, b *bundle, s Suite, o options) *inProcess {
	t.Helper()
	cfg := consumers.Config{Topics: []string{b.topic}, Group: o.group, MaxPoll: o.maxBatch, MaxAttempts: s.Group.MaxAttempts}
	if cfg.Group == "" {
		cfg.Group = groupID(b, s)
	}
	g := &inProcess{b: b, crashed: &atomic.Bool{}, flaky: &consumertest.Flaky{Failures: int64(o.failFirst)}, watch: &lockWatch{}}
	if o.failFirst > 0 {
		// A transient failure must be retried beyond any attempts.
		cfg.MaxAttempts = 1
	}
	if o.contend {
		cfg.Transactions = 6
	}
	cfg.Signals = consumers.NewTestSignals(t)
	if o.crash {
		cfg.Signals.Crash = func(*kgo.Record) bool { return g.crashed.CompareAndSwap(false, true) }
	}
	h, _ := s.Group.Runtime(b.topic).(consumers.Handler)
	g.flaky.Handler = h
	g.watch.Handler = g.flaky
	g.Running = b.env.Run(t, cfg, g.watch, nil)
	return g
}

func (g *inProcess) ID() string { return g.Running.ID }

func (g *inProcess) WaitCommitted(t *testing.T, timeout time.Duration, recs ...*kgo.Record) {
	t.Helper()
	g.b.env.WaitCommitted(t, g.Running.ID, timeout, recs...)
}

func (g *inProcess) WaitAttempt(t *testing.T, what string) {
	t.Helper()
	g.Signals.Attempted.WaitUntil(time.Minute, what, func(error) bool { return true })
}

func (g *inProcess) WaitCrashed(t *testing.T) {
	t.Helper()
	g.Signals.Attempted.WaitUntil(time.Minute, "a batch committed before the crash", func(err error) bool { return err == nil })
	g.Stop(t)
	if !g.crashed.Load() {
		t.Fatal("the group did not crash")
	}
}

func (g *inProcess) Stop(t *testing.T) {
	t.Helper()
	g.Running.Stop(t)
}

func (g *inProcess) Failures(*testing.T) (failed, onLocks int) {
	return int(g.flaky.Failed()), int(g.watch.failed.Load())
}

func (g *inProcess) DeadLetters(t *testing.T) []deadLetter {
	t.Helper()
	return readDeadLetters(t, g.b.env.Pool, `SELECT partition, "offset", reason FROM dead_letters WHERE consumer_group = $1`, g.Running.ID)
}

// readDeadLetters runs query, a dead-letter query of group's ($1).
func readDeadLetters(t *testing.T, pool *pgxpool.Pool, query, group string) []deadLetter {
	t.Helper()
	rows, err := pool.Query(context.Background(), query, group)
	if err != nil {
		t.Fatalf("effecttest: the dead letters of %s: %v", group, err)
	}
	var out []deadLetter
	var d deadLetter
	if _, err := pgx.ForEachRow(rows, []any{&d.partition, &d.offset, &d.reason}, func() error {
		out = append(out, d)
		return nil
	}); err != nil {
		t.Fatalf("effecttest: the dead letters of %s: %v", group, err)
	}
	return out
}
