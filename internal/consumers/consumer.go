// Package consumers applies business effects from Kafka to Postgres.
//
// A Group is one Kafka consumer group running one Handler. Each assigned
// partition gets its own worker; a worker applies a batch of records in ONE
// Postgres transaction and commits the Kafka offsets only after that
// transaction committed. A crash between the two replays the batch, which is
// harmless because handlers are idempotent by construction (business keys,
// monotonic versions): that is how effects happen exactly once on top of
// at-least-once delivery.
package consumers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicehq/sluice/internal/telemetry"
)

// Config tunes a consumer group.
type Config struct {
	// Group is the Kafka consumer group id; stable, so lag tools follow it.
	Group string
	// Topics are the topics consumed.
	Topics []string
	// DeadLetterTopic receives, through the outbox, records that failed for
	// good. Default "<group>.dlq".
	DeadLetterTopic string
	// MaxPoll bounds records fetched per poll and per batch. A partition
	// whose worker holds two batches' worth not yet applied is paused until
	// it catches up, so memory stays under three polls' worth per partition.
	// Default 5000.
	MaxPoll int
	// MaxBufferedBytes bounds the bytes of records (keys, values, headers)
	// the group holds, fetched and not yet applied, across all the
	// partitions it owns; a batch takes at most a quarter of it. Default
	// 32 MiB.
	MaxBufferedBytes int64
	// MaxAttempts is how often a permanently failing record is tried before
	// it is dead-lettered, the attempts one after the other without a
	// pause: a permanent failure is not waited out, and a tenant's poison
	// must not hold the partition's other tenants for a backoff each.
	// Default 1: the same record against the same data fails the same
	// way, a dead letter is replayed once the cause is fixed, and every
	// further attempt is the partition's other tenants' time (make bench's
	// neighbours step measures it).
	MaxAttempts int
	// LockTimeout bounds how long a statement of a batch's transaction
	// waits for a row lock (Postgres' lock_timeout, set for the
	// transaction): a row locked elsewhere (a long transaction, an
	// operator's UPDATE) fails the transaction it is in, quickly, so a
	// shared transaction's other partitions apply alone at once instead of
	// waiting out the lock with it; the partition whose record waits retries
	// in place, its order kept, every LockTimeout plus a short pause.
	// Default 200ms; negative: no timeout.
	LockTimeout time.Duration
	// Transactions bounds the group's batch transactions open at once,
	// whatever the number of partitions it owns. Batches that become ready
	// while one is open share the next one, up to MaxPoll records and a
	// quarter of MaxBufferedBytes. Under live load the group keeps one
	// transaction open, so each carries many partitions' records; the
	// others open for a backlog (a share of an eighth of those limits) or
	// when the open one takes longer than SharePatience. A batch retried
	// after a failure takes a transaction of its own, within the Slots.
	// Default 2.
	Transactions int
	// SharePatience is how long batches wait for the group's open
	// transaction before they may open another (within Transactions).
	// Default 50ms, several live transactions' time.
	SharePatience time.Duration
	// Slots, when set, bounds batch transactions across every group
	// sharing it, on top of each group's Transactions: all of them together
	// stay within what the database (and the connection pool) can take.
	// Nil: Transactions slots of the group's own.
	Slots Slots
	// Backoff is the first retry pause, doubled up to MaxBackoff, with jitter.
	// Defaults 200ms and 30s.
	Backoff    time.Duration
	MaxBackoff time.Duration
	// SessionTimeout is how long the group coordinator waits for a member's
	// heartbeat before it hands that member's partitions to the others. A
	// SIGKILLed consumer never leaves the group, so its partitions stall this
	// long: franz-go's default of 45 s is a long outage for a pipeline whose
	// effects are otherwise a second behind. Default 6 s, the smallest
	// session a broker accepts by default (group.min.session.timeout.ms);
	// shorter needs that broker setting lowered, longer rides out longer
	// pauses (a stalled host, a long GC) without a rebalance.
	SessionTimeout time.Duration
	// HeartbeatInterval is how often a member tells the coordinator it is
	// alive; a third of the session or less, so one lost heartbeat never
	// costs the session. It is also the longest pause between the group
	// client's retries, so a member that lost its coordinator is back
	// within a session of a new one answering. Default 1 s.
	HeartbeatInterval time.Duration
	// Signals, when set, report the workers' progress to a test.
	Signals *TestSignals
	// Tracing, when enabled, continues each record's trace from its
	// traceparent header: a receive and a process span per record (kotel),
	// a span per batch attempt linking them, and the effects handlers
	// start (Record.StartEffect). Off (the zero value): no hook, no span.
	Tracing telemetry.Tracing
}

// WithDefaults fills unset fields.
func (c Config) WithDefaults() Config {
	if c.DeadLetterTopic == "" {
		c.DeadLetterTopic = c.Group + ".dlq"
	}
	if c.MaxPoll <= 0 {
		c.MaxPoll = 5000
	}
	if c.Transactions <= 0 {
		c.Transactions = 2
	}
	if c.SharePatience <= 0 {
		c.SharePatience = 50 * time.Millisecond
	}
	if c.MaxBufferedBytes <= 0 {
		c.MaxBufferedBytes = 32 << 20
	}
	if c.MaxAttempts <= 0 {
		c.MaxAttempts = 1
	}
	if c.LockTimeout == 0 {
		c.LockTimeout = 200 * time.Millisecond
	}
	if c.Backoff <= 0 {
		c.Backoff = 200 * time.Millisecond
	}
	if c.MaxBackoff <= 0 {
		c.MaxBackoff = 30 * time.Second
	}
	if c.SessionTimeout <= 0 {
		c.SessionTimeout = 6 * time.Second
	}
	if c.HeartbeatInterval <= 0 {
		c.HeartbeatInterval = min(time.Second, c.SessionTimeout/3)
	}
	return c
}

func (c Config) validate() error {
	if c.Group == "" || len(c.Topics) == 0 {
		return errors.New("consumers: a group needs a name and topics")
	}
	return nil
}

// Slots bounds open batch transactions; see Config.Slots.
type Slots chan struct{}

// NewSlots allows n batch transactions at once.
func NewSlots(n int) Slots { return make(Slots, max(n, 1)) }

// Group runs one consumer group.
type Group struct {
	cfg      Config
	log      *slog.Logger
	applier  applier // the handler's transactions, within the slots
	joint    *joint  // batches sharing transactions, within Transactions
	kafkaOpt []kgo.Opt
	metrics  *metrics
	budget   *budget
	signals  *TestSignals
	tracing  tracing
	faults   *deploymentFaults // partitions held up by the deployment

	workers map[partitionKey]*worker // touched only by the poll loop and rebalance hooks, never at once (BlockRebalanceOnPoll)

	// A test's crash (TestSignals.Crash): once crashed, nothing is marked
	// or committed again, and stop ends Run's poll.
	crashed atomic.Bool
	stop    context.CancelFunc
}

// crashNow stops the group as a kill would; true.
func (g *Group) crashNow() bool {
	g.crashed.Store(true)
	g.stop()
	return true
}

// batchBytes bounds one batch and one partition's queue: a quarter of the
// group's budget, so a partition retrying in place cannot starve the others.
func (g *Group) batchBytes() int64 { return g.cfg.batchBytes() }

func (c Config) batchBytes() int64 { return c.MaxBufferedBytes / 4 }

type partitionKey struct {
	topic     string
	partition int32
}

// NewGroup builds a consumer group; kafkaOpts reach the cluster.
func NewGroup(cfg Config, log *slog.Logger, pool *pgxpool.Pool, handler Handler, kafkaOpts []kgo.Opt, reg prometheus.Registerer) (*Group, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	m := newMetrics(reg, cfg.Group)
	slots := cfg.Slots
	if slots == nil {
		slots = NewSlots(cfg.Transactions)
	}
	signals := cfg.Signals
	if signals == nil {
		signals = &TestSignals{}
	}
	a := applier{pool: pool, handler: handler, group: cfg.Group, slots: slots, waited: m.slotSeconds, lockTimeout: setLockTimeout(cfg.LockTimeout)}
	t := newTracing(cfg.Tracing, cfg.Group)
	return &Group{
		cfg: cfg, log: log.With(slog.String("group", cfg.Group)),
		applier: a, joint: newJoint(a, t, m, cfg.Transactions, cfg.SharePatience, cfg.MaxPoll, cfg.batchBytes()),
		kafkaOpt: kafkaOpts, metrics: m, workers: map[partitionKey]*worker{},
		budget: &budget{limit: cfg.MaxBufferedBytes, gauge: m.buffered}, signals: signals, faults: newDeploymentFaults(cfg.Group),
		tracing: t,
	}, nil
}

// Run consumes until ctx ends, then finishes in-flight batches, commits their
// offsets and leaves the group.
func (g *Group) Run(ctx context.Context) error {
	ctx, g.stop = context.WithCancel(ctx)
	defer g.stop()
	cl, err := kgo.NewClient(g.clientOpts()...)
	if err != nil {
		return fmt.Errorf("consumer group %s: %w", g.cfg.Group, err)
	}
	defer cl.Close()
	g.log.Info("consuming", slog.Any("topics", g.cfg.Topics))

	for {
		fetches := cl.PollRecords(ctx, g.cfg.MaxPoll)
		if fetches.IsClientClosed() || ctx.Err() != nil {
			break
		}
		fetches.EachError(func(topic string, partition int32, err error) {
			if !errors.Is(err, context.Canceled) {
				g.log.Warn("fetch error", slog.String("topic", topic), slog.Int("partition", int(partition)), slog.Any("error", err))
			}
		})
		fetches.EachPartition(func(p kgo.FetchTopicPartition) {
			if len(p.Records) == 0 {
				return
			}
			if w, ok := g.workers[partitionKey{p.Topic, p.Partition}]; ok {
				// Never blocks: a worker retrying in place pauses its own
				// partition instead of stalling the others (and rebalances).
				w.offer(p.Records)
			}
		})
		cl.AllowRebalance()
	}
	// Stop every worker after its current batch, commit, then leave.
	g.stopWorkers(g.all())
	if !g.crashed.Load() { // a test's kill: nothing more reaches Kafka
		g.commitMarked(cl)
	}
	cl.AllowRebalance()
	return nil
}

// clientOpts configures the group's Kafka client: the group's settings, the
// cluster's (kafkaOpts), and the tracing hooks when tracing is on.
func (g *Group) clientOpts() []kgo.Opt {
	opts := append([]kgo.Opt{
		kgo.ConsumerGroup(g.cfg.Group),
		kgo.ConsumeTopics(g.cfg.Topics...),
		// Offsets are marked once a batch's transaction committed and sent
		// to Kafka every second, not after each batch: a synchronous commit
		// per batch put a broker round trip between every two batches of a
		// partition. A crash replays at most that second, harmlessly.
		kgo.AutoCommitMarks(),
		kgo.AutoCommitInterval(time.Second),
		kgo.BlockRebalanceOnPoll(),
		// A killed member's partitions wait out its session; see
		// Config.SessionTimeout.
		kgo.SessionTimeout(g.cfg.SessionTimeout),
		kgo.HeartbeatInterval(g.cfg.HeartbeatInterval),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		// franz-go buffers one fetch per broker beyond what the workers
		// hold, 50 MiB by default, counted compressed: webhook bodies
		// compress up to ten times, and what a fetch brings is held whole
		// before any partition can be paused. A thirty-second of the
		// budget, compressed, keeps a decompressed fetch within a third of
		// it and still gives batches of thousands of records.
		kgo.FetchMaxBytes(int32(min(g.cfg.MaxBufferedBytes/32, 1<<30))),
		kgo.FetchMaxPartitionBytes(int32(min(g.cfg.MaxBufferedBytes/128, 1<<30))),
		// A partition resumed after a pause joins the next fetch, which
		// waits behind one long-polling idle partitions: keep that short.
		kgo.FetchMaxWait(500 * time.Millisecond),
		kgo.OnPartitionsAssigned(g.assigned),
		kgo.OnPartitionsRevoked(g.revoked),
		kgo.OnPartitionsLost(g.lost),
		// A member whose coordinator died gives its session up and tries
		// to join again; the coordinator taking over gives every member
		// one session to come back. Retrying at franz-go's pace (up to 5 s
		// apart) a member could miss that 6 s and come back a new member:
		// a second rebalance for one broker's death.
		kgo.RetryBackoffFn(retryBackoff(g.cfg.HeartbeatInterval)),
	}, g.kafkaOpt...)
	return append(opts, g.tracing.hooks()...)
}

// retryBackoff paces the group client's retries: from a tenth of ceiling,
// doubling with each failure, with jitter, never longer than ceiling.
func retryBackoff(ceiling time.Duration) func(int) time.Duration {
	return func(fails int) time.Duration {
		d := ceiling / 10 << min(max(fails-1, 0), 4)
		d = time.Duration(float64(d) * (0.8 + 0.4*rand.Float64()))
		return min(d, ceiling)
	}
}

func (g *Group) assigned(_ context.Context, cl *kgo.Client, assigned map[string][]int32) {
	for topic, partitions := range assigned {
		for _, p := range partitions {
			w := newWorker(g, cl, topic, p)
			g.workers[partitionKey{topic, p}] = w
			go w.run()
		}
	}
}

// revoked stops the workers of partitions handed to another member, then
// commits what they applied, so the new owner starts after it.
func (g *Group) revoked(_ context.Context, cl *kgo.Client, revoked map[string][]int32) {
	g.stopWorkers(keysOf(revoked))
	g.commitMarked(cl)
}

// lost stops the workers of partitions this member no longer owns (a
// session expired): a commit would be refused, the new owner replays.
func (g *Group) lost(_ context.Context, _ *kgo.Client, lost map[string][]int32) {
	g.stopWorkers(keysOf(lost))
}

func (g *Group) commitMarked(cl *kgo.Client) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := cl.CommitMarkedOffsets(ctx); err != nil {
		g.log.Warn("offset commit failed", slog.Any("error", err))
	}
}

func keysOf(m map[string][]int32) []partitionKey {
	var keys []partitionKey
	for topic, partitions := range m {
		for _, p := range partitions {
			keys = append(keys, partitionKey{topic, p})
		}
	}
	return keys
}

func (g *Group) all() []partitionKey {
	keys := make([]partitionKey, 0, len(g.workers))
	for k := range g.workers {
		keys = append(keys, k)
	}
	return keys
}

func (g *Group) stopWorkers(keys []partitionKey) {
	var wg sync.WaitGroup
	for _, k := range keys {
		w, ok := g.workers[k]
		if !ok {
			continue
		}
		delete(g.workers, k)
		close(w.quit)
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-w.done
			// Its unapplied records are dropped (never committed): whoever
			// owns the partition next fetches them again, unpaused.
			w.unpause()
		}()
	}
	wg.Wait()
}
