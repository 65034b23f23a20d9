// Package cdc is the relay: it streams committed outbox rows from a logical
// replication slot (pgoutput) to Kafka, so no component ever writes to
// Postgres and Kafka as two separate steps.
//
// The invariant it keeps: the LSN confirmed to Postgres never passes a record
// that Kafka has not acknowledged. A crash at any point therefore replays
// records (consumers are idempotent) and never loses one. One relay per slot
// is active at a time; others wait as standbys. A slot that is lost is never
// silently recreated: Resync rebuilds it from the outbox table, which keeps
// rows for a retention window after the relay confirmed them.
package cdc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/plugin/kotel"
	"go.opentelemetry.io/otel/propagation"

	"github.com/sluicehq/sluice/internal/envelope"
	"github.com/sluicehq/sluice/internal/kafka"
	"github.com/sluicehq/sluice/internal/telemetry"
)

// Config tunes the relay.
type Config struct {
	// DatabaseURL is used for the replication connection and the leader lock.
	DatabaseURL string
	// Slot is the logical replication slot's name. Default "sluice".
	Slot string
	// Publication covers the outbox table. Default "sluice_outbox".
	Publication string
	// StatusInterval is how often the confirmed position is reported to
	// Postgres, well under wal_sender_timeout. Default 1s.
	StatusInterval time.Duration
	// HeartbeatInterval is how often a logical message is written so the slot
	// advances when the outbox is idle but the database is not. Default 10s.
	HeartbeatInterval time.Duration
	// MaxInFlight bounds records sent to Kafka and not yet acknowledged; past
	// it the relay stops reading (backpressure). It should cover what the
	// stream reads while Kafka acknowledges (rate times acknowledgement
	// time) several times over. Default 10000.
	MaxInFlight int
	// MaxInFlightBytes bounds the bytes of those records, so large bodies
	// cannot multiply memory. Default 16 MiB.
	MaxInFlightBytes int
	// Linger is how long the producer waits to fill a batch while
	// transactions commit less than a linger apart; a transaction committed
	// a linger or more after the one before it is sent at once. Default 20ms.
	Linger time.Duration
	// LeaderPoll is how often a standby tries to take over. Default 1s.
	LeaderPoll time.Duration
	// RetryBackoff is the pause before a failed stream is restarted. Default 1s.
	RetryBackoff time.Duration
	// DrainTimeout bounds how long a stopping relay waits for Kafka to
	// acknowledge what it was sent, so it can confirm it. Default 5s.
	DrainTimeout time.Duration
	// Retention is how long outbox rows are kept after the relay confirmed
	// them; a resync can reach that far back. Default 24h (zero or less
	// means the default, never "forever": that is KeepOutbox).
	Retention time.Duration
	// KeepOutbox turns retention off: rows are kept until an operator
	// removes them.
	KeepOutbox bool
	// RetentionInterval is how often expired rows are removed. Default 1m.
	RetentionInterval time.Duration
	// RetentionBatch is how many rows one delete removes. Default 5000.
	RetentionBatch int
	// MissingTopicGrace is how long a record whose topic Kafka does not
	// know may wait for it (counted from when the record was read off the
	// slot) before it is parked; the records of other topics flow on
	// meanwhile, and the slot's confirmed position waits at most this long
	// for the record. Keep it well under the time the in-flight window
	// (MaxInFlight, MaxInFlightBytes) takes to fill with such records, or
	// the window fills first and every topic waits out the rest of the
	// grace (docs/relay.md has the arithmetic). Default 5s.
	MissingTopicGrace time.Duration
	// CreateMissingTopics lets the relay create a missing topic, with
	// TopicSpec, when its name is one of Sluice's own under Topics' prefix
	// (Creatable); other missing topics' records are parked after the
	// grace. Off by default: see docs/relay.md.
	CreateMissingTopics bool
	Topics              envelope.Topics
	TopicSpec           kafka.TopicSpec
	// Tracing, when enabled, gives each produced record a span (franz-go's
	// kotel hooks) continuing the trace stored with its outbox row, and
	// writes that span's context into the record's traceparent. Off, the
	// record carries the row's traceparent unchanged.
	Tracing telemetry.Tracing
}

// WithDefaults fills unset fields.
func (c Config) WithDefaults() Config {
	if c.Slot == "" {
		c.Slot = "sluice"
	}
	if c.Publication == "" {
		c.Publication = "sluice_outbox"
	}
	if c.StatusInterval <= 0 {
		c.StatusInterval = time.Second
	}
	if c.HeartbeatInterval <= 0 {
		c.HeartbeatInterval = 10 * time.Second
	}
	if c.MaxInFlight <= 0 {
		c.MaxInFlight = 10000
	}
	if c.MaxInFlightBytes <= 0 {
		c.MaxInFlightBytes = 16 << 20
	}
	if c.Linger <= 0 {
		c.Linger = 20 * time.Millisecond
	}
	if c.LeaderPoll <= 0 {
		c.LeaderPoll = time.Second
	}
	if c.RetryBackoff <= 0 {
		c.RetryBackoff = time.Second
	}
	if c.DrainTimeout <= 0 {
		c.DrainTimeout = 5 * time.Second
	}
	if c.MissingTopicGrace <= 0 {
		c.MissingTopicGrace = 5 * time.Second
	}
	if c.Retention <= 0 {
		c.Retention = 24 * time.Hour
	}
	if c.RetentionInterval <= 0 {
		c.RetentionInterval = time.Minute
	}
	if c.RetentionBatch <= 0 {
		c.RetentionBatch = 5000
	}
	return c
}

// promptStatus is the least time between two status updates when the
// confirmed position moved.
const promptStatus = 100 * time.Millisecond

// heartbeatPrefix marks Sluice's own logical messages.
const heartbeatPrefix = "sluice.heartbeat"

// Relay moves committed outbox rows to Kafka.
type Relay struct {
	cfg      Config
	log      *slog.Logger
	pool     *pgxpool.Pool
	kafkaOpt []kgo.Opt
	metrics  *metrics
	// current is the running session's watermark, read by the heartbeat
	// and retention loops; nil between sessions.
	current atomic.Pointer[watermark]

	testSignals testSignals
}

// New builds a relay. kafkaOpts reach the cluster (see internal/kafka); the
// relay adds its producer settings.
func New(cfg Config, log *slog.Logger, pool *pgxpool.Pool, kafkaOpts []kgo.Opt, reg prometheus.Registerer) *Relay {
	cfg = cfg.WithDefaults()
	return &Relay{cfg: cfg, log: log.With(slog.String("slot", cfg.Slot)), pool: pool, kafkaOpt: kafkaOpts, metrics: newMetrics(reg, cfg.Slot)}
}

// Run waits for leadership, then streams until ctx ends. Stream failures
// (Postgres or Kafka gone) are retried; only ctx ends Run.
func (r *Relay) Run(ctx context.Context) error {
	if err := ensurePublication(ctx, r.pool, r.cfg.Publication); err != nil {
		return err
	}
	for ctx.Err() == nil {
		err := r.lead(ctx)
		if ctx.Err() != nil {
			break
		}
		backoff := r.cfg.RetryBackoff
		if errors.Is(err, ErrSlotLost) {
			// Nothing will change until an operator resyncs; say so loudly
			// but not every second.
			backoff = 10 * r.cfg.RetryBackoff
			r.log.Error("relay cannot stream", slog.Any("error", err))
		} else {
			r.log.Warn("relay stopped, restarting", slog.Any("error", err), slog.Duration("backoff", backoff))
		}
		select {
		case <-ctx.Done():
		case <-time.After(backoff):
		}
	}
	return nil
}

func (r *Relay) lead(ctx context.Context) error {
	waiting := false
	var warned time.Time
	l, err := acquire(ctx, r.cfg.DatabaseURL, r.cfg.Slot, r.cfg.LeaderPoll, func(err error) {
		switch {
		case err != nil:
			if time.Since(warned) >= 10*time.Second { // once per outage, then now and then
				warned = time.Now()
				r.log.Warn("cannot take the slot's lock", slog.Any("error", err))
			}
		case !waiting:
			waiting = true
			r.log.Info("standing by: another relay holds the slot")
		}
	})
	if err != nil {
		return fmt.Errorf("acquire leadership: %w", err)
	}
	defer l.release()
	r.metrics.leader.Set(1)
	defer r.metrics.leader.Set(0)
	r.log.Info("relay is the leader")

	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	held := make(chan struct{})
	go func() {
		defer close(held)
		if err := l.hold(ctx, r.cfg.LeaderPoll); err != nil && ctx.Err() == nil {
			cancel(err)
		}
	}()
	// The lock's connection is the holder's until it returns: release
	// (deferred above, so run after this) must not use it during a ping,
	// which pgx answers with a panic.
	defer func() {
		cancel(nil)
		<-held
	}()
	go r.heartbeat(ctx)
	if !r.cfg.KeepOutbox {
		go r.retain(ctx)
	}
	err = r.stream(ctx)
	if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
		return cause
	}
	return err
}

// heartbeat writes a non-transactional logical message now and then. It
// reaches the stream behind everything committed before it, so confirming
// its position is safe once the work before it is acknowledged. The same
// tick records progress in cdc_slots and samples the slot's lag.
func (r *Relay) heartbeat(ctx context.Context) {
	every(ctx, r.cfg.HeartbeatInterval, func() {
		if _, err := r.pool.Exec(ctx, heartbeatSQL, heartbeatPrefix); err != nil && ctx.Err() == nil {
			r.log.Warn("heartbeat failed", slog.Any("error", err))
		}
		r.observeSlot(ctx)
	})
}

// every runs fn every d until ctx ends.
func every(ctx context.Context, d time.Duration, fn func()) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			fn()
		}
	}
}

func (r *Relay) observeSlot(ctx context.Context) {
	if s, err := ReadSlotStatus(ctx, r.pool, r.cfg.Slot); err == nil {
		r.metrics.slotLagBytes.Set(float64(s.LagBytes))
	}
	wm := r.current.Load()
	if wm == nil {
		return
	}
	p := wm.progress()
	var at *time.Time
	if !p.confirmedAt.IsZero() {
		at = &p.confirmedAt
	}
	if _, err := r.pool.Exec(ctx, slotProgressSQL, r.cfg.Slot, p.confirmed.String(), at); err != nil && ctx.Err() == nil {
		r.log.Warn("recording progress failed", slog.Any("error", err))
	}
}

// traces is the propagator that reads a row's trace context, nil when
// tracing is off.
func (r *Relay) traces() propagation.TextMapPropagator {
	if !r.cfg.Tracing.Enabled() {
		return nil
	}
	return r.cfg.Tracing.Propagation()
}

// topicPolicy is what becomes of records whose topic is missing.
func (r *Relay) topicPolicy() topicPolicy {
	p := topicPolicy{spec: r.cfg.TopicSpec, grace: r.cfg.MissingTopicGrace}
	if r.cfg.CreateMissingTopics {
		topics := r.cfg.Topics
		p.create = func(topic string) bool { return Creatable(topics, topic) }
	}
	return p
}

func (r *Relay) producer() (*kgo.Client, error) {
	opts := append([]kgo.Opt{
		kgo.RequiredAcks(kgo.AllISRAcks()),
		// The relay bounds what it has in flight itself (MaxInFlight,
		// MaxInFlightBytes); the client's buffers are larger so Produce never
		// blocks the receive loop, which must keep answering Postgres.
		kgo.MaxBufferedRecords(2 * r.cfg.MaxInFlight),
		kgo.MaxBufferedBytes(2 * r.cfg.MaxInFlightBytes),
		kgo.ProducerLinger(r.cfg.Linger),
		// Consumers fetch whole batches, however small their fetch limit:
		// a quarter MiB (compressed) keeps their memory in step with it.
		kgo.ProducerBatchMaxBytes(256 << 10),
		// Retriable errors are retried without limit (franz-go's default):
		// the watermark holds the slot meanwhile. A topic that stays unknown
		// fails its records after three metadata looks; the relay then
		// settles them itself (missingTopics): created, waited for, or
		// parked after MissingTopicGrace, never the session's end. A topic
		// in error makes franz-go look again as soon as MetadataMinAge
		// allows: at its default (5s) three looks took up to 11s, past the
		// grace; at 500ms they take about 1.5s, and cost a metadata request
		// per 500ms only while some topic is in error.
		kgo.UnknownTopicRetries(2),
		kgo.MetadataMinAge(500 * time.Millisecond),
		// A connection cut right after the dial (a proxy or load balancer
		// in front of a broker that is down) is an outage to wait out, not
		// the misconfiguration franz-go assumes by default.
		kgo.AlwaysRetryEOF(),
	}, r.kafkaOpt...)
	if t := r.cfg.Tracing; t.Enabled() {
		tracer := kotel.NewTracer(kotel.TracerProvider(t.Provider), kotel.TracerPropagator(t.Propagation()))
		opts = append(opts, kgo.WithHooks(kotel.NewKotel(kotel.WithTracer(tracer)).Hooks()...))
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("kafka producer: %w", err)
	}
	return cl, nil
}

// stream is one replication session: from the slot's confirmed position
// until an error or ctx ends.
func (r *Relay) stream(ctx context.Context) error {
	producer, err := r.producer()
	if err != nil {
		return err
	}
	defer producer.Close()

	conn, err := replicationConn(ctx, r.cfg.DatabaseURL)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())

	start, created, err := slotPosition(ctx, r.pool, conn, r.cfg.Slot)
	if err != nil {
		return err
	}
	if created {
		r.log.Info("replication slot created", slog.String("lsn", start.String()))
	}
	err = pglogrepl.StartReplication(ctx, conn, r.cfg.Slot, start, pglogrepl.StartReplicationOptions{
		// Binary format (PostgreSQL 14+): bytea arrives raw, not as hex
		// twice its size that both sides would encode and decode.
		PluginArgs: []string{"proto_version '2'", "binary 'true'", fmt.Sprintf("publication_names '%s'", r.cfg.Publication), "messages 'true'"},
	})
	if err != nil {
		return fmt.Errorf("start replication at %s: %w", start, err)
	}
	r.log.Info("streaming", slog.String("from_lsn", start.String()))
	r.testSignals.streaming.Signal(start)

	pubCtx, stopPub := context.WithCancel(context.WithoutCancel(ctx))
	defer stopPub()
	wm := newWatermark(start)
	s := &session{relay: r, conn: conn, wm: wm, reported: start, lastCommit: start,
		pub: newPublisher(pubCtx, producer, wm, newParker(r.pool, r.log, r.metrics), r.metrics, r.traces(), r.topicPolicy())}
	r.current.Store(wm)
	defer r.current.Store(nil)
	err = s.run(ctx)
	s.drain()
	return err
}

// session holds one stream's state.
type session struct {
	relay *Relay
	conn  *pgconn.PgConn
	wm    *watermark
	pub   *publisher

	columns     map[uint32]outboxColumns
	tx          *txn
	lastCommit  pglogrepl.LSN // end of the last commit or message read
	published   bool          // the open transaction produced a record
	lastRecords time.Time     // when the last transaction with records committed
	lastStatus  time.Time
	reported    pglogrepl.LSN
}

func (s *session) run(ctx context.Context) error {
	s.columns = map[uint32]outboxColumns{}
	// Receives wait on the connection's read deadline, moved only when a
	// status goes out, and one watch ends them when ctx does: a deadline
	// context per message (a timer and a context watch each, for every
	// begin, row and commit) cost more than decoding the row.
	conn := s.conn.Conn()
	stop := context.AfterFunc(ctx, func() { _ = conn.SetReadDeadline(time.Now()) })
	defer stop()
	var deadline time.Time
	for {
		select {
		case err := <-s.pub.failed:
			return err
		default:
		}
		if err := s.maybeReport(ctx, false); err != nil {
			return err
		}
		if err := s.awaitCapacity(ctx); err != nil {
			return err
		}
		// A status write whose context ended clears the deadline (pgconn's
		// watch does), and it moves lastStatus: set it again then.
		if d := s.lastStatus.Add(s.relay.cfg.StatusInterval); !d.Equal(deadline) {
			deadline = d
			if err := conn.SetReadDeadline(d); err != nil {
				return fmt.Errorf("receive: %w", err)
			}
			if err := ctx.Err(); err != nil { // ended before the deadline was set
				return err
			}
		}
		msg, err := s.conn.ReceiveMessage(context.Background())
		if err != nil {
			if pgconn.Timeout(err) && ctx.Err() == nil {
				continue
			}
			return fmt.Errorf("receive: %w", err)
		}
		switch m := msg.(type) {
		case *pgproto3.CopyData:
			if err := s.handleCopyData(ctx, m.Data); err != nil {
				return err
			}
		case *pgproto3.ErrorResponse:
			return fmt.Errorf("replication stream: %s (%s)", m.Message, m.Code)
		default:
			return fmt.Errorf("replication stream: unexpected %T", msg)
		}
	}
}

// drain gives Kafka a bounded moment to acknowledge what it was sent and
// reports the final position, so a stopping relay leaves little to replay.
// Whatever is not acknowledged by then is simply replayed by the next leader.
func (s *session) drain() {
	ctx, cancel := context.WithTimeout(context.Background(), s.relay.cfg.DrainTimeout)
	defer cancel()
	flushed := make(chan struct{})
	go func() {
		_ = s.pub.producer.Flush(ctx)
		close(flushed)
	}()
	for done := false; !done && !s.conn.IsClosed(); {
		select {
		case <-flushed:
			done = true
		case <-ctx.Done():
			done = true
		case <-time.After(s.relay.cfg.StatusInterval):
		}
		// Status keeps flowing while Kafka drains, as in backpressure.
		if err := s.maybeReport(ctx, done); err != nil {
			return
		}
	}
	<-flushed
	if !s.conn.IsClosed() {
		s.relay.log.Info("stream ended", slog.String("confirmed_lsn", s.reported.String()))
	}
}

// awaitCapacity is the stream's backpressure: with too many records (or
// bytes) unacknowledged it stops reading (Postgres then stops sending) but
// keeps reporting status, so the server does not time the connection out
// while Kafka is slow or away.
func (s *session) awaitCapacity(ctx context.Context) error {
	cfg := s.relay.cfg
	return s.pub.awaitRoom(ctx, cfg.MaxInFlight, cfg.MaxInFlightBytes, cfg.StatusInterval, func() error {
		s.relay.metrics.backpressure.Inc()
		return s.maybeReport(ctx, false)
	})
}

func (s *session) maybeReport(ctx context.Context, force bool) error {
	since := time.Since(s.lastStatus)
	if !force && since < s.relay.cfg.StatusInterval {
		// A position that moved is reported soon: the less a crash leaves
		// unconfirmed, the less the next leader replays.
		if since < promptStatus || s.wm.progress().confirmed == s.reported {
			return nil
		}
	}
	p := s.wm.progress()
	// All three positions are set explicitly: left at zero, pglogrepl would
	// fill them with the write position.
	err := pglogrepl.SendStandbyStatusUpdate(ctx, s.conn, pglogrepl.StandbyStatusUpdate{
		WALWritePosition: p.confirmed, WALFlushPosition: p.confirmed, WALApplyPosition: p.confirmed, ClientTime: time.Now(),
	})
	if err != nil {
		return fmt.Errorf("send status: %w", err)
	}
	s.lastStatus = time.Now()
	m := s.relay.metrics
	m.inflight.Set(float64(p.inflight))
	m.inflightBytes.Set(float64(p.bytes))
	if p.oldest.IsZero() {
		m.oldestUnconfirmed.Set(0)
	} else {
		m.oldestUnconfirmed.Set(max(0, time.Since(p.oldest).Seconds()))
	}
	if p.confirmed != s.reported {
		s.reported = p.confirmed
		m.confirmedLSN.Set(float64(p.confirmed))
	}
	return nil
}

func (s *session) handleCopyData(ctx context.Context, data []byte) error {
	if len(data) == 0 {
		return nil
	}
	switch data[0] {
	case pglogrepl.PrimaryKeepaliveMessageByteID:
		ka, err := pglogrepl.ParsePrimaryKeepaliveMessage(data[1:])
		if err != nil {
			return fmt.Errorf("parse keepalive: %w", err)
		}
		// The server's WAL end is confirmable only between transactions,
		// with everything read acknowledged, and past the last commit seen:
		// keepalives also arrive in the middle of a transaction's output.
		if s.tx == nil && ka.ServerWALEnd > s.lastCommit && s.wm.progress().idle {
			s.wm.mark(ka.ServerWALEnd, time.Time{})
			s.lastCommit = ka.ServerWALEnd
		}
		if ka.ReplyRequested {
			return s.maybeReport(ctx, true)
		}
	case pglogrepl.XLogDataByteID:
		xld, err := pglogrepl.ParseXLogData(data[1:])
		if err != nil {
			return fmt.Errorf("parse xlog data: %w", err)
		}
		return s.handleWAL(xld)
	}
	return nil
}

func (s *session) handleWAL(xld pglogrepl.XLogData) error {
	if len(xld.WALData) > 0 && xld.WALData[0] == 'I' {
		return s.handleInsert(xld)
	}
	msg, err := pglogrepl.Parse(xld.WALData)
	if err != nil {
		return fmt.Errorf("decode pgoutput at %s: %w", xld.WALStart, err)
	}
	switch m := msg.(type) {
	case *pglogrepl.RelationMessage:
		cols, err := learnColumns(m)
		if err != nil {
			return err
		}
		s.columns[m.RelationID] = cols
	case *pglogrepl.BeginMessage:
		s.tx = s.wm.begin(m.CommitTime)
	case *pglogrepl.CommitMessage:
		if s.tx == nil {
			return errors.New("commit outside a transaction")
		}
		s.wm.commit(s.tx, m.TransactionEndLSN)
		s.tx = nil
		s.lastCommit = max(s.lastCommit, m.TransactionEndLSN)
		if s.published {
			s.published = false
			s.pace(time.Now())
		}
	case *pglogrepl.LogicalDecodingMessage:
		if !m.Transactional && s.tx == nil {
			s.wm.mark(m.LSN, heartbeatTime(m))
			s.lastCommit = max(s.lastCommit, m.LSN)
		}
	}
	return nil
}

func (s *session) handleInsert(xld pglogrepl.XLogData) error {
	relation, tuple, err := parseInsert(xld.WALData)
	if err != nil {
		return fmt.Errorf("decode pgoutput at %s: %w", xld.WALStart, err)
	}
	cols, ok := s.columns[relation]
	if !ok {
		return fmt.Errorf("insert into unknown relation %d", relation)
	}
	if s.tx == nil {
		return errors.New("insert outside a transaction")
	}
	rec, err := cols.record(tuple)
	if err != nil {
		s.pub.unreadable(s.tx, xld.WALStart, err)
		return nil
	}
	s.pub.publish(s.tx, rec, xld.WALStart)
	s.published = true
	return nil
}

// pace decides whether a committed transaction's records wait out the
// producer's linger. Lingering pays only when other transactions' records
// join the same produce requests (under load: fewer, larger requests, much
// cheaper for the broker per record). When the transaction before it
// committed a linger or more ago, nothing is likely to join: its records go
// at once, so a trickle never waits the linger. (The producer learns a
// topic's partitions with its first record there, which lingers once
// regardless.)
func (s *session) pace(now time.Time) {
	if now.Sub(s.lastRecords) >= s.relay.cfg.Linger {
		s.pub.sendNow()
	}
	s.lastRecords = now
}

// heartbeatTime is when a heartbeat was written; zero for other messages.
func heartbeatTime(m *pglogrepl.LogicalDecodingMessage) time.Time {
	if m.Prefix != heartbeatPrefix {
		return time.Time{}
	}
	us, err := strconv.ParseInt(string(m.Content), 10, 64)
	if err != nil {
		return time.Time{}
	}
	return time.UnixMicro(us)
}
