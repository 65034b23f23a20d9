// Package cdc is the relay: it streams committed outbox rows from a logical
// replication slot (pgoutput) to Kafka, so no component ever writes to
// Postgres and Kafka as two separate steps.
//
// The invariant it keeps: the LSN confirmed to Postgres never passes a record
// that Kafka has not acknowledged. A crash at any point therefore replays
// records (consumers are idempotent) and never loses one. One relay per slot
// is active at a time; others wait as standbys.
package cdc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kgo"
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
	// it the relay stops reading (backpressure). Default 20000.
	MaxInFlight int
	// LeaderPoll is how often a standby tries to take over. Default 1s.
	LeaderPoll time.Duration
	// RetryBackoff is the pause before a failed stream is restarted. Default 1s.
	RetryBackoff time.Duration
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
		c.MaxInFlight = 20000
	}
	if c.LeaderPoll <= 0 {
		c.LeaderPoll = time.Second
	}
	if c.RetryBackoff <= 0 {
		c.RetryBackoff = time.Second
	}
	return c
}

// heartbeatPrefix marks Sluice's own logical messages.
const heartbeatPrefix = "sluice.heartbeat"

// Relay moves committed outbox rows to Kafka.
type Relay struct {
	cfg      Config
	log      *slog.Logger
	pool     *pgxpool.Pool
	kafkaOpt []kgo.Opt
	metrics  *metrics
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
		r.log.Warn("relay stopped, restarting", slog.Any("error", err), slog.Duration("backoff", r.cfg.RetryBackoff))
		select {
		case <-ctx.Done():
		case <-time.After(r.cfg.RetryBackoff):
		}
	}
	return nil
}

func (r *Relay) lead(ctx context.Context) error {
	waiting := false
	l, err := acquire(ctx, r.cfg.DatabaseURL, r.cfg.Slot, r.cfg.LeaderPoll, func() {
		if !waiting {
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
	go func() {
		if err := l.hold(ctx, r.cfg.LeaderPoll); err != nil && ctx.Err() == nil {
			cancel(err)
		}
	}()
	go r.heartbeat(ctx)
	err = r.stream(ctx)
	if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
		return cause
	}
	return err
}

// heartbeat writes a non-transactional logical message now and then. It
// reaches the stream behind everything committed before it, so confirming
// its position is safe once the work before it is acknowledged.
func (r *Relay) heartbeat(ctx context.Context) {
	t := time.NewTicker(r.cfg.HeartbeatInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if _, err := r.pool.Exec(ctx, `SELECT pg_logical_emit_message(false, $1, '')`, heartbeatPrefix); err != nil && ctx.Err() == nil {
				r.log.Warn("heartbeat failed", slog.Any("error", err))
			}
			r.observeSlot(ctx)
		}
	}
}

func (r *Relay) observeSlot(ctx context.Context) {
	var lagBytes int64
	err := r.pool.QueryRow(ctx, `SELECT COALESCE(pg_wal_lsn_diff(pg_current_wal_lsn(), confirmed_flush_lsn), 0)::bigint
		FROM pg_replication_slots WHERE slot_name = $1`, r.cfg.Slot).Scan(&lagBytes)
	if err == nil {
		r.metrics.slotLagBytes.Set(float64(lagBytes))
	}
}

func (r *Relay) producer() (*kgo.Client, error) {
	opts := append([]kgo.Opt{
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.MaxBufferedRecords(2 * r.cfg.MaxInFlight),
		kgo.ProducerLinger(5 * time.Millisecond),
		// Retriable errors are retried without limit (franz-go's default):
		// the watermark holds the slot meanwhile. A topic that stays unknown
		// fails its records, which ends the session; the next one replays.
		kgo.UnknownTopicRetries(10),
	}, r.kafkaOpt...)
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
	defer func() {
		// Records already handed to Kafka may still land; a new session
		// replays from the confirmed position either way.
		flushCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = producer.Flush(flushCtx)
		producer.Close()
	}()

	replCfg, err := pgconn.ParseConfig(r.cfg.DatabaseURL)
	if err != nil {
		return fmt.Errorf("parse database url: %w", err)
	}
	replCfg.RuntimeParams["replication"] = "database"
	conn, err := pgconn.ConnectConfig(ctx, replCfg)
	if err != nil {
		return fmt.Errorf("replication connection: %w", err)
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
		PluginArgs: []string{"proto_version '1'", fmt.Sprintf("publication_names '%s'", r.cfg.Publication), "messages 'true'"},
	})
	if err != nil {
		return fmt.Errorf("start replication at %s: %w", start, err)
	}
	r.log.Info("streaming", slog.String("from_lsn", start.String()))

	s := &session{relay: r, conn: conn, producer: producer, wm: newWatermark(start),
		parker: newParker(r.pool, r.log, r.metrics), failed: make(chan error, 1)}
	return s.run(ctx)
}

// session holds one stream's state.
type session struct {
	relay    *Relay
	conn     *pgconn.PgConn
	producer *kgo.Client
	wm       *watermark
	parker   *parker
	failed   chan error // a produce error that needs a new session

	columns    map[uint32]outboxColumns
	tx         *txn
	lastStatus time.Time
	reported   pglogrepl.LSN
}

func (s *session) run(ctx context.Context) error {
	s.columns = map[uint32]outboxColumns{}
	for {
		select {
		case err := <-s.failed:
			return err
		default:
		}
		if err := s.maybeReport(ctx, false); err != nil {
			return err
		}
		if err := s.awaitCapacity(ctx); err != nil {
			return err
		}
		recvCtx, cancel := context.WithDeadline(ctx, s.lastStatus.Add(s.relay.cfg.StatusInterval))
		msg, err := s.conn.ReceiveMessage(recvCtx)
		cancel()
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

// awaitCapacity is backpressure: with too many records unacknowledged it
// stops reading (Postgres then stops sending) but keeps reporting status, so
// the server does not time the connection out while Kafka is slow or away.
func (s *session) awaitCapacity(ctx context.Context) error {
	for {
		if _, inflight := s.wm.position(); inflight < s.relay.cfg.MaxInFlight {
			return nil
		}
		s.relay.metrics.backpressure.Inc()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-s.failed:
			return err
		case <-s.wm.acked:
		case <-time.After(s.relay.cfg.StatusInterval):
		}
		if err := s.maybeReport(ctx, false); err != nil {
			return err
		}
	}
}

func (s *session) maybeReport(ctx context.Context, force bool) error {
	if !force && time.Since(s.lastStatus) < s.relay.cfg.StatusInterval {
		return nil
	}
	pos, inflight := s.wm.position()
	// All three positions are set explicitly: left at zero, pglogrepl would
	// fill them with the write position.
	err := pglogrepl.SendStandbyStatusUpdate(ctx, s.conn, pglogrepl.StandbyStatusUpdate{
		WALWritePosition: pos, WALFlushPosition: pos, WALApplyPosition: pos, ClientTime: time.Now(),
	})
	if err != nil {
		return fmt.Errorf("send status: %w", err)
	}
	s.lastStatus = time.Now()
	s.relay.metrics.inflight.Set(float64(inflight))
	if pos != s.reported {
		s.reported = pos
		s.relay.metrics.confirmedLSN.Set(float64(pos))
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
		if ka.ReplyRequested {
			return s.maybeReport(ctx, true)
		}
	case pglogrepl.XLogDataByteID:
		xld, err := pglogrepl.ParseXLogData(data[1:])
		if err != nil {
			return fmt.Errorf("parse xlog data: %w", err)
		}
		return s.handleWAL(ctx, xld)
	}
	return nil
}

func (s *session) handleWAL(ctx context.Context, xld pglogrepl.XLogData) error {
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
		s.tx = s.wm.begin()
	case *pglogrepl.InsertMessage:
		cols, ok := s.columns[m.RelationID]
		if !ok {
			return fmt.Errorf("insert into unknown relation %d", m.RelationID)
		}
		if s.tx == nil {
			return errors.New("insert outside a transaction")
		}
		rec, err := cols.record(m.Tuple)
		if err != nil {
			// A row we cannot read will not become readable by retrying:
			// park it so the stream moves on.
			s.wm.add(s.tx)
			s.parker.park(ctx, s.wm, s.tx, nil, xld.WALStart, err)
			return nil
		}
		s.produce(ctx, rec, xld.WALStart)
	case *pglogrepl.CommitMessage:
		if s.tx == nil {
			return errors.New("commit outside a transaction")
		}
		s.wm.commit(s.tx, m.TransactionEndLSN)
		s.tx = nil
	case *pglogrepl.LogicalDecodingMessage:
		if !m.Transactional {
			s.wm.mark(m.LSN)
		}
	}
	return nil
}

func (s *session) produce(ctx context.Context, rec *kgo.Record, lsn pglogrepl.LSN) {
	t := s.tx
	s.wm.add(t)
	s.relay.metrics.produced.Inc()
	committedAt := time.Now()
	s.producer.Produce(ctx, rec, func(rec *kgo.Record, err error) {
		switch {
		case err == nil:
			s.relay.metrics.acked.Inc()
			s.relay.metrics.ackSeconds.Observe(time.Since(committedAt).Seconds())
			s.wm.ack(t)
		case isPermanent(err):
			s.parker.park(ctx, s.wm, t, rec, lsn, err)
		default:
			// Not acknowledged, so never confirmed: a new session replays it
			// from the confirmed position. If the session is ending anyway
			// (cancelled, client closed) there is nothing else to do.
			select {
			case s.failed <- fmt.Errorf("produce to %s: %w", rec.Topic, err):
			default:
			}
		}
	})
}
