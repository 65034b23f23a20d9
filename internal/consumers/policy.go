package consumers

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/sluicehq/sluice/internal/pg"
)

// policy is a partition's failure policy: after a failed attempt it says
// how the next one goes and when. A record at fault is retried with its own
// exponential backoff and, once out of attempts, dead-lettered by the next
// attempt; a set-based batch refused for some record's data is applied
// again one record at a time, at once, to find that record; anything else
// (transient, or the deployment at fault) retries the whole batch with
// backoff, without giving up and without skipping.
type policy struct {
	maxAttempts         int
	backoff, maxBackoff time.Duration
	metrics             *metrics
	log                 *slog.Logger
	faults              *deploymentFaults // the group's, where this partition's are told
	partition           partitionKey

	failures map[int64]*failure // by offset: records failing for good, attempts so far
}

type failure struct {
	attempts int
	first    time.Time
	last     time.Time
	reason   string
}

func newPolicy(cfg Config, m *metrics, log *slog.Logger, faults *deploymentFaults, partition partitionKey) *policy {
	return &policy{maxAttempts: cfg.MaxAttempts, backoff: cfg.Backoff, maxBackoff: cfg.MaxBackoff,
		metrics: m, log: log, faults: faults, partition: partition, failures: map[int64]*failure{}}
}

// next judges the failure err of attempt over entries, applied one record
// per call when oneByOne, and returns the pause before the next attempt (0:
// at once), whether that one goes record by record and, when a record
// failed for good, cut: the next attempts are of entries[:cut] alone (that
// record and those before it), the rest left for a batch of its own. It
// marks the entry to dead-letter when its attempts ran out.
func (p *policy) next(ctx context.Context, entries []entry, attempt int, oneByOne bool, err error) (delay time.Duration, byRecord bool, cut int) {
	if failed, ok := failedRecords(err); ok && allPermanent(failed, len(entries)) {
		// Every record named failed for good: each counts an attempt, and
		// the next attempt goes up to the last of them.
		for _, f := range failed {
			delay, byRecord = p.recordFailed(&entries[f.index], f.err, oneByOne)
		}
		return delay, byRecord, failed[len(failed)-1].index + 1
	}
	if IsPermanent(err) && errors.Is(err, errSetBased) {
		p.metrics.oneByOne.Inc()
		p.log.InfoContext(ctx, "batch refused set-based, applying it record by record", slog.Int("records", len(entries)), slog.Any("error", err))
		return 0, true, 0 // no pause: nothing was retried yet, the fault is located first
	}
	delay, byRecord = p.transient(ctx, attempt, oneByOne, err)
	return delay, byRecord, 0
}

// allPermanent says whether every record named is in the batch and failed
// for good.
func allPermanent(failed []recordError, n int) bool {
	for _, f := range failed {
		if f.index < 0 || f.index >= n || !IsPermanent(f.err) {
			return false
		}
	}
	return true
}

// transient judges a failure that is not a record's for good: the whole
// batch is retried with backoff, never skipped.
func (p *policy) transient(ctx context.Context, attempt int, oneByOne bool, err error) (time.Duration, bool) {
	delay := backoff(p.backoff, p.maxBackoff, attempt)
	if d, ok := RetryDelay(err); ok && d > delay {
		delay = d
	}
	p.metrics.transient.Inc()
	if WaitedForLock(err) {
		// A row locked elsewhere: the lock timeout already waited, and
		// the lock may end any moment. A short pause, not a backoff that
		// grows to MaxBackoff and leaves the partition idle long after.
		p.metrics.lockWaits.Inc()
		p.log.InfoContext(ctx, "batch waited for a row lock held elsewhere, retrying", slog.Int("attempt", attempt), slog.Any("error", err))
		return min(delay, lockRetryPause), oneByOne
	}
	if pg.Classify(err) == pg.FaultDeployment {
		// Never the record's fault: dead-lettering would throw the stream
		// away for a missing migration or grant. Retried, the group not
		// ready meanwhile, and loud once a minute.
		p.metrics.deployment.Inc()
		if p.faults.failed(p.partition, err) {
			p.log.ErrorContext(ctx, "batch failed: the deployment is at fault (schema or privileges), retrying until it is fixed", slog.Int("attempt", attempt),
				slog.Duration("in", delay), slog.Any("error", err))
		}
		return delay, oneByOne
	}
	p.log.WarnContext(ctx, "batch failed, retrying", slog.Int("attempt", attempt), slog.Duration("in", delay), slog.Any("error", err))
	return delay, oneByOne
}

// recordFailed counts a permanent failure of e's record; the next attempt
// follows at once. Out of attempts, the record is dead-lettered by it, and
// the rest of the batch may go set-based again.
func (p *policy) recordFailed(e *entry, err error, oneByOne bool) (time.Duration, bool) {
	rec := e.rec
	f := p.failures[rec.Offset]
	if f == nil {
		f = &failure{first: time.Now()}
		p.failures[rec.Offset] = f
	}
	f.attempts++
	f.last, f.reason = time.Now(), err.Error()
	p.log.WarnContext(rec.traced(context.Background()), "record failed", slog.Int64("offset", rec.Offset), slog.String("key", string(rec.Key)),
		slog.String("event_id", rec.Event.ID), slog.Int("attempt", f.attempts), slog.Any("error", err))
	if f.attempts >= p.maxAttempts {
		e.dead = f
		return 0, false
	}
	// Again at once: retrying a permanent failure cannot wait it out, and
	// a pause would be the partition's time, every tenant's on it.
	return 0, oneByOne
}

// lockRetryPause is the longest pause before a batch that timed out on a
// row lock tries again.
const lockRetryPause = 100 * time.Millisecond

// WaitedForLock says whether err is a statement that gave up waiting for
// a lock (lock_timeout): a handler's cue that a row it writes is held
// elsewhere (see Blocked).
func WaitedForLock(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == pgerrcode.LockNotAvailable
}

// committed accounts for a batch whose transaction committed.
func (p *policy) committed(entries []entry) {
	if p.faults.recovered(p.partition) {
		p.log.Info("batch applied again: the deployment's fault is gone")
	}
	applied := 0
	for _, e := range entries {
		if e.wait != nil {
			continue // set aside, counted there
		}
		if e.dead == nil {
			applied++
			continue
		}
		p.metrics.deadLettered.Inc()
		p.log.ErrorContext(e.rec.traced(context.Background()), "record dead-lettered", slog.Int64("offset", e.rec.Offset), slog.String("key", string(e.rec.Key)),
			slog.String("event_id", e.rec.Event.ID), slog.Int("attempts", e.dead.attempts), slog.String("reason", e.dead.reason))
		delete(p.failures, e.rec.Offset)
	}
	p.metrics.applied.Add(float64(applied))
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
