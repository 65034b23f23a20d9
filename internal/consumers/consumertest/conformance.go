package consumertest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicehq/sluice/internal/consumers"
	"github.com/sluicehq/sluice/internal/envelope"
)

// Suite describes a handler to Conformance: how to build it, the histories
// of objects it is fed, and how to read the state one object ends in.
type Suite struct {
	// Kind is the source kind of the handler's events.
	Kind string
	// Topic is the suffix of the topic the handler consumes.
	Topic string
	// Features declare what the handler promises beyond idempotence.
	Features Features
	// Handler builds the handler of consumer group group; topics name the
	// topics its intents go to.
	Handler func(env *Env, topics envelope.Topics, group string) consumers.Handler
	// Histories are what happens to objects, each with the state it ends in.
	Histories []History
	// State reads the effects about object: no object id in it, so objects
	// with the same history compare equal.
	State func(tb testing.TB, env *Env, f Fixture, object string) string
	// Poison is a record about object the handler refuses for good. Default:
	// the first event of the first history with a body that is not JSON.
	Poison func(f Fixture, topic, object string) *kgo.Record
}

// Features are what a handler declares, as watermill's pubsub tests have
// backends declare theirs.
type Features struct {
	// AnyOrder: any arrival order of an object's events ends in the same
	// state (invariant 7: order by version, not by arrival).
	AnyOrder bool
}

// History is what happens to one object.
type History struct {
	Name string
	// Events are the records about object, in the order they happened (for
	// versions tied in time, the order Sluice accepted them in).
	Events func(f Fixture, topic, object string) []*kgo.Record
	// Final is State once every event was applied, once or many times.
	Final string
}

// Conformance runs the invariants every handler keeps against s's handler,
// on the real Postgres and Kafka: idempotent on redelivery and rewind, order
// by version where it declares it, a permanent error dead-lettered while
// its partition flows, a transient one retried without giving up.
func Conformance(t *testing.T, s Suite) {
	t.Run("RedeliveryAndRewindChangeNothing", func(t *testing.T) { t.Parallel(); redelivery(t, s) })
	if s.Features.AnyOrder {
		t.Run("AnyOrderEndsInTheNewestState", func(t *testing.T) { t.Parallel(); anyOrder(t, s) })
	}
	t.Run("PermanentErrorIsDeadLetteredAndThePartitionFlows", func(t *testing.T) { t.Parallel(); permanent(t, s) })
	t.Run("TransientErrorIsRetriedWithoutGivingUp", func(t *testing.T) { t.Parallel(); transient(t, s) })
}

// bundle is what one conformance test works with.
type bundle struct {
	env    *Env
	f      Fixture
	topic  string
	topics envelope.Topics
}

func setup(t *testing.T, s Suite, partitions int32) bundle {
	env := Shared(t)
	topic := env.Topic(t, s.Topic, partitions)
	return bundle{env: env, f: env.Tenant(t, s.Kind), topic: topic, topics: envelope.Topics{Prefix: topic}}
}

// run starts s's handler, wrapped by wrap when set, over the bundle's topic.
func (b bundle) run(t *testing.T, s Suite, cfg consumers.Config, wrap func(consumers.Handler) consumers.Handler) *Running {
	cfg.Topics = []string{b.topic}
	cfg.Group = fmt.Sprintf("%s.group.%d", b.topic, rand.Uint32())
	h := s.Handler(b.env, b.topics, cfg.Group)
	if wrap != nil {
		h = wrap(h)
	}
	return b.env.Run(t, cfg, h, nil)
}

// objects gives each of s's histories an object of its own and returns
// them with their events, in order.
func (b bundle) objects(s Suite) (map[string]History, []*kgo.Record) {
	objects := map[string]History{}
	var recs []*kgo.Record
	for _, h := range s.Histories {
		obj := object()
		objects[obj] = h
		recs = append(recs, h.Events(b.f, b.topic, obj)...)
	}
	return objects, recs
}

// object returns a fresh object id: digits, so it suits numeric ids too.
func object() string { return fmt.Sprint(1_000_000_000 + rand.N(8_000_000_000)) }

func (b bundle) check(t *testing.T, s Suite, objects map[string]History, g *Running) {
	t.Helper()
	for obj, h := range objects {
		if got := s.State(t, b.env, b.f, obj); got != h.Final {
			t.Errorf("%s (object %s): state %q, want %q", h.Name, obj, got, h.Final)
		}
	}
	if n := b.env.Count(t, `SELECT count(*) FROM dead_letters WHERE consumer_group = $1`, g.ID); n != 0 {
		t.Errorf("dead letters = %d, want 0", n)
	}
}

// Invariants 2, 3 and 6: every event delivered twice, then the whole topic
// read again by a new group (a rewind): the state is what one delivery
// makes.
func redelivery(t *testing.T, s Suite) {
	b := setup(t, s, 3)
	objects, recs := b.objects(s)
	recs = append(recs, recs...)
	b.env.Produce(t, recs...)
	g := b.run(t, s, consumers.Config{}, nil)
	b.env.WaitCommitted(t, g.ID, time.Minute, recs...)
	b.check(t, s, objects, g)
	g.Stop(t)

	rewound := b.run(t, s, consumers.Config{}, nil)
	b.env.WaitCommitted(t, rewound.ID, time.Minute, recs...)
	b.check(t, s, objects, rewound)
}

// Invariant 7: each history delivered in order, reversed, shuffled and
// redelivered ends in the same state.
func anyOrder(t *testing.T, s Suite) {
	b := setup(t, s, 3)
	objects := map[string]History{}
	var recs []*kgo.Record
	for _, h := range s.Histories {
		for _, order := range orders {
			obj := object()
			h := h
			h.Name += ", " + order
			objects[obj] = h
			// Each object gets its own records, in the order's arrangement.
			events := h.Events(b.f, b.topic, obj)
			recs = append(recs, arrange(events, order)...)
		}
	}
	b.env.Produce(t, recs...)
	g := b.run(t, s, consumers.Config{}, nil)
	b.env.WaitCommitted(t, g.ID, time.Minute, recs...)
	b.check(t, s, objects, g)
}

// orders are the arrangements of a history a projection must not care about.
var orders = []string{"in order", "reversed", "shuffled 1", "shuffled 2", "shuffled 3", "redelivered"}

// arrange puts events in the arrangement order names: shuffled, unless
// named otherwise; redelivered is every event twice, shuffled.
func arrange(events []*kgo.Record, order string) []*kgo.Record {
	switch order {
	case "in order":
		return events
	case "reversed":
		return Reversed(events)
	case "redelivered":
		return append(Shuffled(events), Shuffled(events)...)
	}
	return Shuffled(events)
}

// Invariant 8: a record the handler refuses for good is dead-lettered
// after MaxAttempts, and the records after it on its partition are applied.
func permanent(t *testing.T, s Suite) {
	b := setup(t, s, 1)
	poison := s.Poison
	if poison == nil {
		poison = func(f Fixture, topic, obj string) *kgo.Record {
			rec := s.Histories[0].Events(f, topic, obj)[0]
			rec.Value = []byte("{not json")
			return rec
		}
	}
	bad := poison(b.f, b.topic, object())
	objects, recs := b.objects(s)
	recs = append([]*kgo.Record{bad}, recs...)
	b.env.Produce(t, recs...)
	g := b.run(t, s, consumers.Config{MaxAttempts: 2}, nil)
	b.env.WaitCommitted(t, g.ID, time.Minute, recs...)
	for obj, h := range objects {
		if got := s.State(t, b.env, b.f, obj); got != h.Final {
			t.Errorf("%s after the poison: state %q, want %q", h.Name, got, h.Final)
		}
	}
	if n := b.env.Count(t, `SELECT count(*) FROM dead_letters WHERE consumer_group = $1 AND "offset" = $2 AND attempts = 2`, g.ID, bad.Offset); n != 1 {
		t.Errorf("the poison is not the group's dead letter after 2 attempts (%d rows)", n)
	}
	if n := b.env.Count(t, `SELECT count(*) FROM dead_letters WHERE consumer_group = $1`, g.ID); n != 1 {
		t.Errorf("dead letters = %d, want 1", n)
	}
}

// A transient failure (a dependency down, here at settle time) is retried
// in place beyond MaxAttempts, never dead-lettered, and what the retries
// apply ends in the state of one clean delivery.
func transient(t *testing.T, s Suite) {
	b := setup(t, s, 1)
	objects, recs := b.objects(s)
	b.env.Produce(t, recs...)
	flaky := &Flaky{Failures: 3}
	g := b.run(t, s, consumers.Config{MaxAttempts: 1}, func(h consumers.Handler) consumers.Handler {
		flaky.Handler = h
		return flaky
	})
	b.env.WaitCommitted(t, g.ID, time.Minute, recs...)
	if n := flaky.Failed(); n != 3 {
		t.Errorf("transient failures = %d, want 3", n)
	}
	b.check(t, s, objects, g)
}

// Flaky wraps a handler and fails the settle of its first Failures
// batches, transiently (a dependency down); Failed counts them.
type Flaky struct {
	consumers.Handler
	Failures int64
	failed   atomic.Int64
}

// Failed is how many settles failed.
func (h *Flaky) Failed() int64 { return h.failed.Load() }

// Begin implements consumers.Handler.
func (h *Flaky) Begin(tx pgx.Tx) consumers.Batch {
	return flakyBatch{Batch: h.Handler.Begin(tx), h: h}
}

type flakyBatch struct {
	consumers.Batch
	h *Flaky
}

func (b flakyBatch) Settle(ctx context.Context) error {
	if b.h.failed.Add(1) <= b.h.Failures {
		return errors.New("dependency down")
	}
	b.h.failed.Add(-1)
	return b.Batch.Settle(ctx)
}

// Steps is a History made of steps, record turning each into the record
// about object (i is the step's place in the order things happened).
func Steps[S any](name, final string, record func(f Fixture, topic, object string, i int, s S) *kgo.Record, steps ...S) History {
	return History{Name: name, Final: final, Events: func(f Fixture, topic, object string) []*kgo.Record {
		recs := make([]*kgo.Record, len(steps))
		for i, s := range steps {
			recs[i] = record(f, topic, object, i, s)
		}
		return recs
	}}
}
