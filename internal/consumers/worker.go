package consumers

import (
	"context"
	_ "embed"
	"fmt"
	"log/slog"
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

	policy  *policy    // this partition's failures in progress
	waiting waitingSet // this partition's records set aside
}

func newWorker(g *Group, cl *kgo.Client, topic string, partition int32) *worker {
	log := g.log.With(slog.String("topic", topic), slog.Int("partition", int(partition)))
	return &worker{
		g: g, cl: cl, topic: topic, partition: partition,
		log:    log,
		wake:   make(chan struct{}, 1),
		quit:   make(chan struct{}),
		done:   make(chan struct{}),
		policy: newPolicy(g.cfg, g.metrics, log, g.faults, partitionKey{topic, partition}),
	}
}

func (w *worker) run() {
	defer close(w.done)
	defer w.g.faults.recovered(partitionKey{w.topic, w.partition}) // another process owns it now
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
		if !w.waiting.loaded || !time.Now().Before(w.waiting.due) {
			if !w.tend() {
				return
			}
			continue
		}
		recs, size := w.take()
		if len(recs) == 0 {
			due := time.NewTimer(time.Until(w.waiting.due))
			select {
			case <-w.quit:
				due.Stop()
				return
			case <-w.wake:
			case <-due.C:
			}
			due.Stop()
			continue
		}
		ok := w.process(recs, size)
		w.g.budget.release(size)
		if !ok {
			return
		}
	}
}

// tend loads the partition's waiting keys before its first batch, and
// retries its records set aside when they are due; false when told to quit
// meanwhile.
func (w *worker) tend() bool {
	remote, cancel := w.quitContext()
	defer cancel()
	if w.waiting.loaded {
		return w.retryWaiting(remote)
	}
	for attempt := 1; ; attempt++ {
		err := w.loadWaiting(remote)
		if err == nil {
			w.waiting.schedule(true)
			return true
		}
		if remote.Err() != nil {
			return false
		}
		delay := backoff(w.g.cfg.Backoff, w.g.cfg.MaxBackoff, attempt)
		w.log.Warn("waiting keys not read, trying again before the partition's first batch", slog.Duration("in", delay), slog.Any("error", err))
		if !w.wait(delay) {
			return false
		}
	}
}

// quitContext is a context that quit cancels, for the waits and the
// remote calls of a batch.
func (w *worker) quitContext() (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		select {
		case <-w.quit:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
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

// process applies batch until it is committed: shared with other
// partitions' batches when it can, else alone, retrying in place as the
// policy says. It returns false when told to quit before that (revoke or
// shutdown while retrying); the uncommitted records are then consumed again
// by whoever owns the partition next.
func (w *worker) process(batch []*kgo.Record, size int64) bool {
	// The transaction runs on a context that quit does not cancel, so a batch
	// whose transaction started finishes cleanly; quit interrupts only the
	// waits and the remote calls of Prepare, which commit nothing.
	remote, cancel := w.quitContext()
	defer cancel()
	entries := parseEntries(batch)
	w.waiting.behind(entries)
	w.g.tracing.startProcessing(entries)
	applied := 0 // entries committed, from the first
	defer func() { endProcessing(entries[:applied], true); endProcessing(entries[applied:], false) }()
	committed, err := w.shared(remote, entries, size)
	if committed {
		applied = len(entries)
		w.noteWaiting(entries)
		w.mark(entries[applied-1].rec.Record)
	}
	// Alone, the batch may commit in parts: a record failing for good cuts
	// it after itself, so its retries and its dead letter re-apply only
	// the records before it, and the rest is a batch of its own.
	for applied < len(entries) {
		follow(entries[:applied], entries[applied:])
		n, ok := w.alone(remote, entries[applied:], err)
		if !ok {
			return false
		}
		w.noteWaiting(entries[applied : applied+n])
		applied, err = applied+n, nil
		w.mark(entries[applied-1].rec.Record)
	}
	return true
}

// noteWaiting counts what a committed batch set aside.
// It logs when the partition starts waiting, not for every batch that
// adds to it: a workspace locked while its invoices keep coming sets
// records aside every few batches.
func (w *worker) noteWaiting(entries []entry) {
	was := !w.waiting.empty()
	if n := w.waiting.note(entries); n > 0 {
		w.g.metrics.setAside.Add(float64(n))
		if !was {
			w.log.Info("records set aside: what they need is held elsewhere, or they follow such a record of their key",
				slog.Int("records", n), slog.String("reason", firstWaitReason(entries)))
		}
	}
}

// mark hands the offset past last to Kafka: only once the effects up to it
// are committed. A lost commit (a crash, a revoke meanwhile) only means a
// harmless replay.
func (w *worker) mark(last *kgo.Record) {
	if w.g.crashed.Load() || (w.g.signals.Crash != nil && w.g.signals.Crash(last) && w.g.crashNow()) {
		return
	}
	w.cl.MarkCommitRecords(last)
	w.g.signals.Marked.Signal(last)
}

// shared tries the batch's first attempt in a transaction shared with
// other partitions' batches (see joint). Not committed, nothing of it was,
// and it is applied alone; err is then Prepare's failure, if that was it:
// the batch's first attempt, for the policy to judge. A record that did not
// parse goes alone at once, where the policy judges it.
func (w *worker) shared(remote context.Context, entries []entry, size int64) (committed bool, err error) {
	for _, e := range entries {
		if e.fault != nil {
			return false, nil
		}
	}
	if err := w.g.applier.prepare(remote, entries); err != nil {
		return false, err
	}
	for try := 1; ; try++ {
		err := w.g.joint.apply(entries, size)
		if err == nil {
			break
		}
		// Records it names, of whichever member, wait: every member shares
		// the next transaction again without them, a few times at most,
		// instead of each applying alone because one record met a lock.
		markBlocked(entries, err)
		if blockedRecords(err) == nil || try == shareTries {
			// Maybe another partition's fault: not this batch's attempt.
			w.log.Debug("shared batch transaction failed, applying the partition's batch alone", slog.Any("error", err))
			return false, nil
		}
	}
	w.policy.committed(entries)
	w.g.signals.Attempted.Signal(nil)
	return true, nil
}

// shareTries bounds the shared transactions a batch tries while each
// fails only for records it names as blocked (Blocked).
const shareTries = 3

// alone applies the batch in transactions of its own until one commits a
// part of it, from its first record, and says how many it committed; false
// when told to quit first. failed, when not nil, is how its first attempt
// already failed.
func (w *worker) alone(remote context.Context, entries []entry, failed error) (int, bool) {
	oneByOne := false
	for attempt := 1; ; attempt++ {
		ctx, err := context.Background(), failed
		if attempt > 1 || failed == nil {
			if ctx, err = w.attempt(remote, entries, attempt, oneByOne); err == nil {
				return len(entries), true
			}
		}
		if markBlocked(entries, err) {
			// Not an attempt of the records it names: they wait, and
			// the rest goes again at once without them.
			w.g.signals.Attempted.Signal(err)
			continue
		}
		var delay time.Duration
		var cut int
		delay, oneByOne, cut = w.policy.next(ctx, entries, attempt, oneByOne, err)
		if cut > 0 {
			entries = entries[:cut]
		}
		// Signalled once the policy has counted it, so a waiter reads the
		// metrics of every attempt it saw.
		w.g.signals.Attempted.Signal(err)
		if delay > 0 && !w.wait(delay) {
			return 0, false
		}
	}
}

// attempt applies the batch once in a transaction of its own.
func (w *worker) attempt(remote context.Context, entries []entry, attempt int, oneByOne bool) (context.Context, error) {
	if stillWaiting(entries) {
		// A retry that found every record still blocked: their rows stay
		// as they are, and there is nothing to commit.
		return context.Background(), nil
	}
	start := time.Now()
	ctx, span := w.g.tracing.startBatch(entries, attempt)
	err := w.g.applier.run(ctx, remote, entries, oneByOne, func(ctx context.Context, tx pgx.Tx) error {
		if err := w.deadLetter(ctx, tx, entries); err != nil {
			return err
		}
		return w.leaveWaiting(ctx, tx, entries)
	})
	EndSpan(span, err)
	if err == nil {
		w.g.metrics.committed(time.Since(start), len(entries), 1)
		w.policy.committed(entries)
		w.g.signals.Attempted.Signal(nil)
	}
	return ctx, err
}

// deadLetter writes the entries out of attempts as dead letters.
func (w *worker) deadLetter(ctx context.Context, tx pgx.Tx, entries []entry) error {
	for _, e := range entries {
		if e.dead == nil {
			continue
		}
		if err := writeDeadLetter(ctx, tx, w.g.cfg.Group, w.g.cfg.DeadLetterTopic, e.rec.Record, e.dead); err != nil {
			return err
		}
	}
	return nil
}

// leaveWaiting deletes the rows of a retry's entries: applied,
// dead-lettered or, set aside again after this, still waiting.
func (w *worker) leaveWaiting(ctx context.Context, tx pgx.Tx, entries []entry) error {
	var offsets []int64
	for _, e := range entries {
		if e.waited != nil {
			offsets = append(offsets, e.rec.Offset)
		}
	}
	if len(offsets) == 0 {
		return nil
	}
	if _, err := tx.Exec(ctx, waitingDoneSQL, w.g.cfg.Group, w.topic, w.partition, offsets); err != nil {
		return fmt.Errorf("leave the waiting set: %w", err)
	}
	return nil
}

// writeDeadLetter keeps r, which failed for good, and publishes it to the
// group's dead-letter topic through the outbox.
func writeDeadLetter(ctx context.Context, tx pgx.Tx, group, topic string, r *kgo.Record, f *failure) error {
	headers := envelope.HeaderMap(r.Headers)
	// The outbox row names the record across its copies; the original
	// envelope travels on without it, since it would name the wrong row.
	var outboxID *int64
	if id, err := strconv.ParseInt(headers[envelope.HeaderOutboxID], 10, 64); err == nil {
		outboxID = &id
	}
	delete(headers, envelope.HeaderOutboxID)
	original := envelope.OutboxHeaders(headers)
	headers[HeaderDLQTopic] = r.Topic
	headers[HeaderDLQPartition] = strconv.Itoa(int(r.Partition))
	headers[HeaderDLQOffset] = strconv.FormatInt(r.Offset, 10)
	headers[HeaderDLQGroup] = group
	headers[HeaderDLQAttempts] = strconv.Itoa(f.attempts)
	headers[HeaderDLQReason] = f.reason
	headers[HeaderDLQFirstFailed] = f.first.UTC().Format(time.RFC3339Nano)
	headers[HeaderDLQLastFailed] = f.last.UTC().Format(time.RFC3339Nano)
	dlqHeaders := envelope.OutboxHeaders(headers)
	_, err := tx.Exec(ctx, deadLetterSQL, group, r.Topic, r.Partition, r.Offset, r.Key, original, r.Value,
		f.reason, f.attempts, f.first, f.last, topic, dlqHeaders, outboxID)
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
