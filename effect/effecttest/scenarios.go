package effecttest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicehq/sluice/internal/consumers"
	"github.com/sluicehq/sluice/internal/consumers/consumertest"
	"github.com/sluicehq/sluice/internal/testenv"
)

// Run plays s's histories in every scenario, each a subtest of its own,
// in parallel. A scenario fails when an object's state is not its
// history's Final, when a record is dead-lettered that is no poison, or
// when batches deadlock.
func Run(t *testing.T, s Suite) {
	t.Helper()
	if err := s.check(); err != nil {
		t.Fatal(err)
	}
	if len(s.Histories) == 0 || s.State == nil {
		t.Fatal("effecttest: a suite needs histories and a State")
	}
	for _, sc := range scenarios(s) {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			sc.play(t, s)
		})
	}
}

// check says whether s names one group to run, and a runnable one.
func (s Suite) check() error {
	if s.Process != nil {
		if s.Group.Name != "" || s.Group.Handler != nil {
			return errors.New("effecttest: a suite runs a Group or a Process, not both")
		}
		return s.Process.check()
	}
	return s.Group.Check()
}

// name is the name of the suite's group.
func (s Suite) name() string {
	if s.Process != nil {
		return s.Process.Name
	}
	return s.Group.Name
}

type scenario struct {
	name string
	play func(t *testing.T, s Suite)
}

func scenarios(s Suite) []scenario {
	list := []scenario{
		{"EveryEventDeliveredTwice", deliveredTwice},
		{"DistinctEventsAboutOneOperation", distinctEvents},
		{"CrashBetweenTheEffectsAndTheOffsets", crash},
		{"RewindToTheEarliestOffset", rewind},
		{"PoisonIsDeadLetteredAndThePartitionFlows", poison},
		{"TransientFailureIsRetriedWithoutGivingUp", transient},
	}
	if s.AnyOrder {
		list = append(list, scenario{"AnyOrderEndsInTheNewestState", anyOrder})
	}
	if s.Shared != nil {
		list = append(list, scenario{"ASharedRowLockedElsewhereHoldsNothingUp", lockedRow},
			scenario{"BatchesContendingForSharedRowsNeverDeadlock", contending})
	}
	return list
}

// bundle is what one scenario works with: its tenant, its topic and the
// objects its histories are played on.
type bundle struct {
	env     *env
	f       Fixture
	topic   string
	objects map[string]History
}

func newBundle(t *testing.T, s Suite, partitions int32) *bundle {
	t.Helper()
	e := setup(t, s)
	return &bundle{env: e, f: e.fixture(t, s), topic: e.Topic(t, s.name(), partitions), objects: map[string]History{}}
}

// play gives each history an object and returns its records, each
// history's in order (arranged by arrange when set).
func (b *bundle) play(s Suite, suffix string, arrange func([]*kgo.Record) []*kgo.Record) []*kgo.Record {
	var recs []*kgo.Record
	for _, h := range s.Histories {
		obj := object()
		h.Name += suffix
		b.objects[obj] = h
		var hrecs []*kgo.Record
		for _, ev := range h.Events(b.f, obj) {
			hrecs = append(hrecs, record(b.f, b.topic, obj, ev))
		}
		if arrange != nil {
			hrecs = arrange(hrecs)
		}
		recs = append(recs, hrecs...)
	}
	return recs
}

// object is a fresh object id: digits, so it suits numeric ids too.
func object() string { return fmt.Sprint(1_000_000_000 + rand.N(8_000_000_000)) }

// check fails for every object whose state is not its history's, and for
// any dead letter of g but poison's (nil: none). A state naming the event
// that set it may name an event's copy (DistinctEventsAboutOneOperation):
// its id is read as the original's.
func (b *bundle) check(t *testing.T, s Suite, g consumer, poison *kgo.Record) {
	t.Helper()
	for obj, h := range b.objects {
		if got := strings.ReplaceAll(s.State(t, b.f, obj), againSuffix, ""); got != h.Final {
			t.Errorf("%s (object %s): state %q, want %q", h.Name, obj, got, h.Final)
		}
	}
	for _, d := range g.DeadLetters(t) {
		if poison == nil || d.partition != poison.Partition || d.offset != poison.Offset {
			t.Errorf("a record (partition %d, offset %d) was dead-lettered: %s", d.partition, d.offset, d.reason)
		}
	}
}

// Every event delivered twice (a provider's retry, a redelivery after a
// rebalance): the state is what one delivery makes.
func deliveredTwice(t *testing.T, s Suite) {
	b := newBundle(t, s, 3)
	recs := b.play(s, "", nil)
	recs = append(recs, recs...)
	b.env.Produce(t, recs...)
	g := b.start(t, s, options{})
	g.WaitCommitted(t, time.Minute, recs...)
	b.check(t, s, g, nil)
}

// againSuffix ends the id of an event's copy under another id.
const againSuffix = "_again"

// Each event also under another event id, just before it: a provider
// that retries with a new id, or a reconciliation's repair, asks for the
// same operation (the copy is another inbox row, accepted first, so ties
// between equal versions still go to the original). An effect keyed by the
// event id instead of its business key applies it twice.
func distinctEvents(t *testing.T, s Suite) {
	b := newBundle(t, s, 3)
	var recs []*kgo.Record
	for _, h := range s.Histories {
		obj := object()
		b.objects[obj] = History{Name: h.Name + ", each event also under another id", Final: h.Final}
		for _, ev := range h.Events(b.f, obj) {
			again := ev
			again.ID = ev.ID + againSuffix
			recs = append(recs, record(b.f, b.topic, obj, again), record(b.f, b.topic, obj, ev))
		}
	}
	b.env.Produce(t, recs...)
	g := b.start(t, s, options{})
	g.WaitCommitted(t, time.Minute, recs...)
	b.check(t, s, g, nil)
}

// A process killed after a batch's effects committed and before its
// offset did: the next owner of the partition applies the batch again.
func crash(t *testing.T, s Suite) {
	b := newBundle(t, s, 1)
	recs := b.play(s, ", applied again after a crash", nil)
	b.env.Produce(t, recs...)
	first := b.start(t, s, options{maxBatch: max(1, len(recs)/3), crash: true})
	first.WaitCrashed(t)
	// The same group: it resumes where its offsets say, before the batch
	// whose effects are already committed.
	again := b.start(t, s, options{group: first.ID()})
	again.WaitCommitted(t, time.Minute, recs...)
	b.check(t, s, again, nil)
}

// The group rewound to the earliest offset (a new group reading from the
// start): everything applied again changes nothing.
func rewind(t *testing.T, s Suite) {
	b := newBundle(t, s, 3)
	recs := b.play(s, ", rewound", nil)
	b.env.Produce(t, recs...)
	g := b.start(t, s, options{})
	g.WaitCommitted(t, time.Minute, recs...)
	g.Stop(t)
	rewound := b.start(t, s, options{})
	rewound.WaitCommitted(t, time.Minute, recs...)
	b.check(t, s, rewound, nil)
}

// Invariant 8: a record the handler refuses for good is dead-lettered
// after the group's attempts, and the records after it on its partition
// are applied.
func poison(t *testing.T, s Suite) {
	b := newBundle(t, s, 1)
	ev := s.Histories[0].Events(b.f, object())[0]
	ev.Body = []byte("{not json")
	if s.Poison != nil {
		ev = s.Poison(b.f, object())
	}
	bad := record(b.f, b.topic, object(), ev)
	recs := append([]*kgo.Record{bad}, b.play(s, ", after a poison", nil)...)
	b.env.Produce(t, recs...)
	g := b.start(t, s, options{})
	g.WaitCommitted(t, time.Minute, recs...)
	b.check(t, s, g, bad)
	if n := len(g.DeadLetters(t)); n != 1 {
		t.Errorf("the poison is not the group's dead letter (%d dead letters)", n)
	}
}

// A transient failure (a dependency down, here when a batch settles) is
// retried in place beyond the group's attempts, never dead-lettered, and
// what the retries apply ends in the state of one clean delivery.
func transient(t *testing.T, s Suite) {
	b := newBundle(t, s, 1)
	recs := b.play(s, ", after transient failures", nil)
	b.env.Produce(t, recs...)
	g := b.start(t, s, options{failFirst: 3})
	g.WaitCommitted(t, time.Minute, recs...)
	if n, _ := g.Failures(t); n != 3 {
		t.Errorf("transient failures = %d, want 3", n)
	}
	b.check(t, s, g, nil)
}

// Invariant 7: each history delivered in order, reversed, shuffled and
// redelivered ends in the same state.
func anyOrder(t *testing.T, s Suite) {
	b := newBundle(t, s, 3)
	var recs []*kgo.Record
	for _, order := range []string{"reversed", "shuffled", "shuffled again", "redelivered shuffled"} {
		recs = append(recs, b.play(s, ", "+order, func(r []*kgo.Record) []*kgo.Record { return arrange(r, order) })...)
	}
	b.env.Produce(t, recs...)
	g := b.start(t, s, options{})
	g.WaitCommitted(t, time.Minute, recs...)
	b.check(t, s, g, nil)
}

// arrange puts a history's records in the order named: reversed,
// redelivered (each twice, shuffled) or shuffled.
func arrange(recs []*kgo.Record, order string) []*kgo.Record {
	switch order {
	case "reversed":
		return consumertest.Reversed(recs)
	case "redelivered shuffled":
		return append(consumertest.Shuffled(recs), consumertest.Shuffled(recs)...)
	}
	return consumertest.Shuffled(recs)
}

// A row the objects share, locked by another transaction for a while (an
// operator's UPDATE, a long report): nothing is dead-lettered for it, and
// once it is let go every state is its history's.
func lockedRow(t *testing.T, s Suite) {
	b := newBundle(t, s, 3)
	recs := b.play(s, ", while a shared row was locked", nil)
	tx, err := b.env.Pool.Begin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(context.Background()) //nolint:errcheck // the lock ends with it
	if _, err := tx.Exec(context.Background(), s.Shared.Lock, b.f.TenantID); err != nil {
		t.Fatalf("lock the shared rows: %v", err)
	}
	b.env.Produce(t, recs...)
	g := b.start(t, s, options{})
	// Attempts fail on the lock (its timeout) or set records aside: wait
	// for one, then let go.
	g.WaitAttempt(t, "an attempt while the row is locked")
	if err := tx.Rollback(context.Background()); err != nil {
		t.Fatal(err)
	}
	g.WaitCommitted(t, time.Minute, recs...)
	testWaitingApplied(t, b, g.ID())
	b.check(t, s, g, nil)
}

// testWaitingApplied waits for the records the group set aside to be
// applied: their offsets were committed before they were.
func testWaitingApplied(t *testing.T, b *bundle, group string) {
	t.Helper()
	testenv.Eventually(t, time.Minute, "the records set aside while the row was locked to be applied", func() (bool, error) {
		return b.env.Count(t, `SELECT count(*) FROM consumer_waiting WHERE consumer_group = $1`, group) == 0, nil
	})
}

// Many batches at once, of several partitions, writing the rows the
// objects share: a group that takes those rows' locks in one order never
// deadlocks (a lock wait beyond the runtime's lock timeout counts as one).
func contending(t *testing.T, s Suite) {
	b := newBundle(t, s, 6)
	var recs []*kgo.Record
	for i := range 8 {
		recs = append(recs, b.play(s, fmt.Sprintf(", contending %d", i), nil)...)
	}
	b.env.Produce(t, recs...)
	g := b.start(t, s, options{maxBatch: 4, contend: true})
	g.WaitCommitted(t, 2*time.Minute, recs...)
	if _, n := g.Failures(t); n > 0 {
		t.Errorf("%d batch attempts deadlocked or waited out the lock timeout on rows other batches of the group held: take shared rows in one order (effect.Counter)", n)
	}
	b.check(t, s, g, nil)
}

// lockFailure says whether err is a deadlock or a lock wait that timed
// out.
func lockFailure(err error) bool {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		return false
	}
	return lockCode(pgErr.Code) || strings.Contains(pgErr.Message, "lock timeout")
}

// lockCode says whether SQLSTATE code is a deadlock (40P01) or a lock not
// available (55P03: lock_timeout, NOWAIT).
func lockCode(code string) bool { return code == "40P01" || code == "55P03" }

// lockWatch counts the batches whose Apply or Settle failed on a lock held
// by another transaction, in shared transactions too (whose failures are
// no batch's attempt).
type lockWatch struct {
	consumers.Handler
	failed atomic.Int64
}

func (h *lockWatch) Begin(tx pgx.Tx) consumers.Batch {
	return watchedBatch{Batch: h.Handler.Begin(tx), h: h}
}

type watchedBatch struct {
	consumers.Batch
	h *lockWatch
}

func (b watchedBatch) Apply(ctx context.Context, recs []consumers.Record) error {
	return b.note(b.Batch.Apply(ctx, recs))
}

func (b watchedBatch) Settle(ctx context.Context) error { return b.note(b.Batch.Settle(ctx)) }

func (b watchedBatch) note(err error) error {
	if lockFailure(err) {
		b.h.failed.Add(1)
	}
	return err
}
