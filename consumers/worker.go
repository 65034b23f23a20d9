package consumers

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicehq/sluice/internal/envelope"
)

//go:embed sql/dead_letter.sql
var deadLetterSQL string

// Dead-letter headers, added to the original record's headers.
const (
	HeaderDLQTopic       = "sluice_dlq_topic"
	HeaderDLQPartition   = "sluice_dlq_partition"
	HeaderDLQOffset      = "sluice_dlq_offset"
	HeaderDLQGroup       = "sluice_dlq_group"
	HeaderDLQAttempts    = "sluice_dlq_attempts"
	HeaderDLQReason      = "sluice_dlq_reason"
	HeaderDLQFirstFailed = "sluice_dlq_first_failed_at"
	HeaderDLQLastFailed  = "sluice_dlq_last_failed_at"
)

// worker applies one partition's records, in order, one batch at a time.
type worker struct {
	g         *Group
	cl        *kgo.Client
	topic     string
	partition int32
	log       *slog.Logger

	mu           sync.Mutex
	pending      []*kgo.Record // fetched, not yet taken into a batch
	pendingBytes int64
	paused       bool // fetching of the partition is paused
	wake         chan struct{}
	quit         chan struct{}
	done         chan struct{}

	failures map[int64]*failure // by offset, for permanent failures in progress
}

type failure struct {
	attempts int
	first    time.Time
	last     time.Time
	reason   string
}

func newWorker(g *Group, cl *kgo.Client, topic string, partition int32) *worker {
	return &worker{
		g: g, cl: cl, topic: topic, partition: partition,
		log:      g.log.With(slog.String("topic", topic), slog.Int("partition", int(partition))),
		wake:     make(chan struct{}, 1),
		quit:     make(chan struct{}),
		done:     make(chan struct{}),
		failures: map[int64]*failure{},
	}
}

func (w *worker) run() {
	defer close(w.done)
	// Records left unapplied are dropped (never committed): whoever owns the
	// partition next fetches them again. Their bytes go back to the group.
	defer func() {
		w.mu.Lock()
		n := w.pendingBytes
		w.pending, w.pendingBytes = nil, 0
		w.mu.Unlock()
		w.g.budget.release(n)
	}()
	for {
		// Pending records never start a batch once quit is closed.
		select {
		case <-w.quit:
			return
		default:
		}
		recs, size := w.take()
		if len(recs) == 0 {
			select {
			case <-w.quit:
				return
			case <-w.wake:
			}
			continue
		}
		ok := w.process(recs)
		w.g.budget.release(size)
		if !ok {
			return
		}
	}
}

// offer queues records from the poll loop without blocking it. Once two
// batches' worth wait, the partition is paused: its worker is slow or
// retrying in place, and the other partitions must not wait for it. It is
// paused too when the group holds its whole byte budget.
func (w *worker) offer(recs []*kgo.Record) {
	n, data := recordBytes(recs)
	detach(recs, data)
	w.g.budget.add(n)
	w.mu.Lock()
	w.pending = append(w.pending, recs...)
	w.pendingBytes += n
	if !w.paused && (len(w.pending) >= 2*w.g.cfg.MaxPoll || w.pendingBytes >= w.g.batchBytes() || w.g.budget.over()) {
		w.paused = true
		w.cl.PauseFetchPartitions(map[string][]int32{w.topic: {w.partition}})
	}
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// take returns the next batch, in order, and what it holds of the budget:
// up to MaxPoll pending records and a quarter of the group's byte budget (at
// least one record). A paused partition resumes once less than a batch
// waits, so the next fetch overlaps the batch being applied.
func (w *worker) take() ([]*kgo.Record, int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, size := 0, int64(0)
	for n < len(w.pending) && n < w.g.cfg.MaxPoll && (n == 0 || size < w.g.batchBytes()) {
		held, _ := recordBytes(w.pending[n : n+1])
		size += held
		n++
	}
	recs := append([]*kgo.Record(nil), w.pending[:n]...)
	left := copy(w.pending, w.pending[n:])
	// The moved-from tail would keep taken records, and the fetch buffers
	// they share, alive long after their batch.
	clear(w.pending[left:])
	w.pending = w.pending[:left]
	w.pendingBytes -= size
	w.resumeLocked()
	return recs, size
}

// maybeResume is the budget's call once bytes were given back.
func (w *worker) maybeResume() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.resumeLocked()
}

func (w *worker) resumeLocked() {
	if !w.paused || len(w.pending) >= w.g.cfg.MaxPoll || w.pendingBytes >= w.g.batchBytes() {
		return
	}
	if !w.g.budget.room() {
		w.g.budget.wait(w)
		return
	}
	w.paused = false
	w.cl.ResumeFetchPartitions(map[string][]int32{w.topic: {w.partition}})
}

// unpause resumes a stopped worker's partition, so it is fetched again if
// it comes back to this member.
func (w *worker) unpause() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.paused {
		w.paused = false
		w.cl.ResumeFetchPartitions(map[string][]int32{w.topic: {w.partition}})
	}
}

// process applies recs until they are all committed, retrying in place. It
// returns false when told to quit before that (revoke or shutdown while
// retrying); the uncommitted records are then consumed again by whoever owns
// the partition next.
func (w *worker) process(batch []*kgo.Record) bool {
	// The transaction runs on a context that quit does not cancel, so a batch
	// whose transaction started finishes cleanly; quit interrupts only the
	// waits and the remote calls of Prepare, which commit nothing.
	ctx := context.Background()
	remote, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-w.quit:
			cancel()
		case <-remote.Done():
		}
	}()
	recs := make([]Record, len(batch))
	parseErrs := make([]error, len(batch))
	for i, r := range batch {
		recs[i], parseErrs[i] = parseRecord(r)
	}
	dead := map[int]*failure{}
	// oneByOne: the set-based batch failed for some record's data, so the
	// batch is applied record by record until that record is found and
	// dead-lettered; the rest of the batch then goes set-based again.
	oneByOne := false
	for attempt := 1; ; attempt++ {
		start := time.Now()
		failedAt, err := w.prepare(remote, recs, parseErrs, dead)
		if err == nil {
			failedAt, err = w.apply(ctx, recs, parseErrs, dead, oneByOne)
		}
		if err == nil {
			w.g.metrics.batchSeconds.Observe(time.Since(start).Seconds())
			w.g.metrics.applied.Add(float64(len(recs) - len(dead)))
			break
		}
		if errors.Is(err, errSetBased) && IsPermanent(err) {
			w.g.metrics.oneByOne.Inc()
			w.log.Info("batch refused set-based, applying it record by record", slog.Int("records", len(recs)), slog.Any("error", err))
			oneByOne = true
			continue // no pause: nothing was retried yet, the fault is located first
		}
		delay := backoff(w.g.cfg.Backoff, w.g.cfg.MaxBackoff, attempt)
		if failedAt >= 0 && IsPermanent(err) {
			rec := recs[failedAt]
			f := w.failures[rec.Offset]
			if f == nil {
				f = &failure{first: time.Now()}
				w.failures[rec.Offset] = f
			}
			f.attempts++
			f.last, f.reason = time.Now(), err.Error()
			w.log.Warn("record failed", slog.Int64("offset", rec.Offset), slog.String("key", string(rec.Key)),
				slog.String("event_id", rec.Event.ID), slog.Int("attempt", f.attempts), slog.Any("error", err))
			if f.attempts >= w.g.cfg.MaxAttempts {
				dead[failedAt] = f
				oneByOne = false // without it, the rest may go set-based
				continue
			}
			delay = backoff(w.g.cfg.Backoff, w.g.cfg.MaxBackoff, f.attempts)
		} else {
			w.g.metrics.transient.Inc()
			if d, ok := RetryDelay(err); ok && d > delay {
				delay = d
			}
			w.log.Warn("batch failed, retrying", slog.Int("attempt", attempt), slog.Duration("in", delay), slog.Any("error", err))
		}
		if !w.wait(delay) {
			return false
		}
	}
	for i, f := range dead {
		w.g.metrics.deadLettered.Inc()
		w.log.Error("record dead-lettered", slog.Int64("offset", recs[i].Offset), slog.String("key", string(recs[i].Key)),
			slog.String("event_id", recs[i].Event.ID), slog.Int("attempts", f.attempts), slog.String("reason", f.reason))
		delete(w.failures, recs[i].Offset)
	}
	// Offsets may go to Kafka only now that the effects are committed. A
	// lost commit (a crash, a revoke meanwhile) only means a harmless replay.
	w.cl.MarkCommitRecords(batch[len(batch)-1])
	return true
}

// prepare runs the handler's remote step for every live record not yet
// prepared, outside any transaction. On failure it returns the record's index.
func (w *worker) prepare(ctx context.Context, recs []Record, parseErrs []error, dead map[int]*failure) (int, error) {
	p, ok := w.g.handler.(Preparer)
	if !ok {
		return -1, nil
	}
	for i := range recs {
		if _, isDead := dead[i]; isDead || parseErrs[i] != nil || recs[i].Prepared != nil {
			continue
		}
		if err := safely(func() error { return p.Prepare(ctx, &recs[i]) }); err != nil {
			return i, err
		}
	}
	return -1, nil
}

// errSetBased marks a failure of a BatchHandler's ApplyBatch, which names
// no record.
var errSetBased = errors.New("set-based batch")

// apply runs one transaction over recs: set-based when the handler is a
// BatchHandler and oneByOne is false, else record by record. On failure it
// returns the index of the record at fault, or -1 when the transaction
// itself (or the set-based batch: errSetBased) failed.
func (w *worker) apply(ctx context.Context, recs []Record, parseErrs []error, dead map[int]*failure, oneByOne bool) (int, error) {
	queued := time.Now()
	w.g.txSlots <- struct{}{}
	defer func() { <-w.g.txSlots }()
	w.g.metrics.slotSeconds.Observe(time.Since(queued).Seconds())
	tx, err := w.g.pool.Begin(ctx)
	if err != nil {
		return -1, fmt.Errorf("begin: %w", err)
	}
	defer tx.Rollback(context.Background()) //nolint:errcheck // no-op after commit
	ctx = withBatch(ctx)
	bh, setBased := w.g.handler.(BatchHandler)
	setBased = setBased && !oneByOne
	live := make([]Record, 0, len(recs))
	for i, r := range recs {
		if f, ok := dead[i]; ok {
			if err := w.deadLetter(ctx, tx, r.Record, f); err != nil {
				return -1, err
			}
			continue
		}
		if parseErrs[i] != nil {
			return i, parseErrs[i]
		}
		if setBased {
			live = append(live, r)
			continue
		}
		if err := safely(func() error { return w.g.handler.Apply(ctx, tx, r) }); err != nil {
			return i, err
		}
	}
	if setBased && len(live) > 0 {
		if err := safely(func() error { return bh.ApplyBatch(ctx, tx, live) }); err != nil {
			return -1, fmt.Errorf("%w: %w", errSetBased, err)
		}
	}
	if err := settle(ctx, tx, w.g.handler); err != nil {
		return -1, fmt.Errorf("settle batch: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return -1, fmt.Errorf("commit: %w", err)
	}
	return -1, nil
}

// safely turns a handler panic into a permanent error: a bug in one record's
// handling must dead-letter that record, not crash the partition forever.
func safely(fn func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = Permanentf("handler panic: %v", p)
		}
	}()
	return fn()
}

func (w *worker) deadLetter(ctx context.Context, tx pgx.Tx, r *kgo.Record, f *failure) error {
	headers := envelope.HeaderMap(r.Headers)
	// The original envelope travels on; sluice_outboxid would name the wrong row.
	delete(headers, envelope.HeaderOutboxID)
	original, _ := json.Marshal(headers)
	headers[HeaderDLQTopic] = r.Topic
	headers[HeaderDLQPartition] = strconv.Itoa(int(r.Partition))
	headers[HeaderDLQOffset] = strconv.FormatInt(r.Offset, 10)
	headers[HeaderDLQGroup] = w.g.cfg.Group
	headers[HeaderDLQAttempts] = strconv.Itoa(f.attempts)
	headers[HeaderDLQReason] = f.reason
	headers[HeaderDLQFirstFailed] = f.first.UTC().Format(time.RFC3339Nano)
	headers[HeaderDLQLastFailed] = f.last.UTC().Format(time.RFC3339Nano)
	dlqHeaders, _ := json.Marshal(headers)
	_, err := tx.Exec(ctx, deadLetterSQL, w.g.cfg.Group, r.Topic, r.Partition, r.Offset, r.Key, original, r.Value,
		f.reason, f.attempts, f.first, f.last, w.g.cfg.DeadLetterTopic, dlqHeaders)
	if err != nil {
		return fmt.Errorf("write dead letter: %w", err)
	}
	return nil
}

// wait sleeps for d unless told to quit.
func (w *worker) wait(d time.Duration) bool {
	select {
	case <-w.quit:
		return false
	case <-time.After(d):
		return true
	}
}

// backoff is exponential with full jitter between half and all of the step.
func backoff(base, ceiling time.Duration, attempt int) time.Duration {
	d := base
	for i := 1; i < attempt && d < ceiling; i++ {
		d *= 2
	}
	d = min(d, ceiling)
	return d/2 + rand.N(d/2+1)
}
