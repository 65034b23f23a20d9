package consumers

// A batch's trip through the runtime, in this file from its start to its
// offset: worker.run (worker.go) takes the batch from its partition's
// queue and hands it to process, whose steps read and mark its entries:
//
//	parseEntries                    the envelopes, read once
//	waitingSet.behind, follow       records behind one of their key set aside wait too
//	shared                          the first attempt, in a transaction shared with other partitions (joint.go)
//	alone -> attempt                then transactions of its own, until a part commits, each the one
//	                                transaction protocol (applier, apply.go) over:
//	  deadLetter, leaveWaiting      the runtime's own rows (dead letters: deadletters.go)
//	  liveRecords                   what the handler is given
//	  markBlocked                   what the handler named Blocked waits aside (waiting.go keeps it)
//	  policy.next                   a failure's next step: retry, one by one, cut, dead letter (policy.go)
//	noteWaiting, mark               what committed: the offset past it, for Kafka

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kgo"
)

// entry is one record of a batch and what the batch learned about it.
type entry struct {
	rec   Record
	fault error    // its envelope did not parse: permanent
	dead  *failure // out of attempts: dead-lettered in the batch's transaction
	// wait: set aside in the batch's transaction (waiting.go), not applied.
	wait *waiting
	// waited: taken from the waiting set by a retry, which deletes its row
	// in its transaction; what it was set aside with.
	waited *waiting
}

func parseEntries(batch []*kgo.Record) []entry {
	entries := make([]entry, len(batch))
	for i, r := range batch {
		entries[i].rec, entries[i].fault = parseRecord(r)
	}
	return entries
}

// liveRecords are the entries to apply, and at[j] the index in entries of
// live[j]. A record whose envelope did not parse fails the attempt before
// anything is applied.
func liveRecords(entries []entry) (live []Record, at []int, err error) {
	live, at = make([]Record, 0, len(entries)), make([]int, 0, len(entries))
	for i, e := range entries {
		switch {
		case e.dead != nil, e.wait != nil:
		case e.fault != nil:
			return nil, nil, RecordFailed(i, e.fault)
		default:
			live, at = append(live, e.rec), append(at, i)
		}
	}
	return live, at, nil
}

// markBlocked sets aside the entries err names (Blocked), and every later
// entry of their keys; true when it set any entry aside that was not yet.
func markBlocked(entries []entry, err error) bool {
	named := blockedRecords(err)
	if len(named) == 0 {
		return false
	}
	by := make(map[*kgo.Record]bool, len(named))
	for _, r := range named {
		by[r] = true
	}
	keys := map[string]bool{}
	marked := false
	for i := range entries {
		e := &entries[i]
		if e.dead != nil || e.fault != nil {
			continue
		}
		reason := err.Error()
		switch key := string(e.rec.Key); {
		case by[e.rec.Record]:
			if key != "" {
				keys[key] = true
			}
		case key != "" && keys[key]:
			reason = "behind a waiting record of its key"
		default:
			continue
		}
		if e.wait == nil {
			e.wait = waitAgain(e.waited)
			marked = true
		}
		e.wait.reason = reason
	}
	return marked
}

// waitAgain is how an entry waits from now: a record taken from the
// waiting set keeps its first time there and counts one more attempt.
func waitAgain(held *waiting) *waiting {
	if held == nil {
		return &waiting{since: time.Now(), attempts: 1}
	}
	w := *held
	w.attempts++
	return &w
}

// follow sets aside the entries of rest whose key has an entry of done
// waiting: a batch committed in parts (a record failing for good cuts it)
// keeps each key behind its first record set aside.
func follow(done, rest []entry) {
	keys := map[string]bool{}
	for _, e := range done {
		if e.wait != nil && len(e.rec.Key) > 0 {
			keys[string(e.rec.Key)] = true
		}
	}
	if len(keys) == 0 {
		return
	}
	for i := range rest {
		e := &rest[i]
		if e.dead == nil && e.fault == nil && e.wait == nil && keys[string(e.rec.Key)] {
			e.wait = waitAgain(e.waited)
			e.wait.reason = "behind a waiting record of its key"
		}
	}
}

// stillWaiting says whether every entry is a retry's record set aside
// again.
func stillWaiting(entries []entry) bool {
	for _, e := range entries {
		if e.waited == nil || e.wait == nil {
			return false
		}
	}
	return len(entries) > 0
}

// firstWaitReason is why the first entry set aside waits.
func firstWaitReason(entries []entry) string {
	for _, e := range entries {
		if e.wait != nil {
			return e.wait.reason
		}
	}
	return ""
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
