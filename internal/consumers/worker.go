package consumers

import (
	"context"
	_ "embed"
	"log/slog"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
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

// wait sleeps for d unless told to quit.
func (w *worker) wait(d time.Duration) bool {
	select {
	case <-w.quit:
		return false
	case <-time.After(d):
		return true
	}
}
