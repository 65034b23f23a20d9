package delivery

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"

	"github.com/sluicehq/sluice/internal/store/endpoints"
)

// loop delivers to one endpoint: it claims up to its concurrency of due
// deliveries, sends each in its own goroutine, and claims again as they
// finish or it is woken.
type loop struct {
	d      *Deliverer
	ctx    context.Context
	cancel context.CancelFunc
	target atomic.Pointer[endpoints.Target]

	concurrency int
	limiter     *rate.Limiter // nil: unlimited
	breaker     *breaker

	wakeC chan struct{} // new work (a notification, a refresh)
	doneC chan struct{} // a delivery finished: a slot is free, a key moved
	busy  sync.WaitGroup

	unparked time.Time // the last unpark sweep
}

func (d *Deliverer) newLoop(parent context.Context, t endpoints.Target) *loop {
	ctx, cancel := context.WithCancel(parent)
	l := &loop{d: d, ctx: ctx, cancel: cancel, wakeC: make(chan struct{}, 1), doneC: make(chan struct{}, 1),
		concurrency: d.concurrency(t), breaker: newBreaker(d.cfg.BreakerFailures, d.cfg.Cooldown, d.cfg.MaxCooldown)}
	if r := d.rate(t); r > 0 {
		l.limiter = rate.NewLimiter(rate.Limit(r), max(1, r/10))
	}
	l.target.Store(&t)
	return l
}

// concurrency is t's, or the default, within the cap.
func (d *Deliverer) concurrency(t endpoints.Target) int {
	c := t.Concurrency
	if c <= 0 {
		c = d.cfg.DefaultConcurrency
	}
	return min(c, d.cfg.MaxConcurrency)
}

// rate is t's requests per second, or the default, within the cap; 0 is
// unlimited below the cap, which then applies.
func (d *Deliverer) rate(t endpoints.Target) int {
	r := t.Rate
	if r <= 0 {
		r = d.cfg.DefaultRate
	}
	if r <= 0 {
		return d.cfg.MaxRate
	}
	return min(r, d.cfg.MaxRate)
}

// sameShape says whether t can replace the loop's target in place: what a
// running loop was built from is unchanged (secrets, headers and the URL
// may change).
func (l *loop) sameShape(t endpoints.Target) bool {
	old := l.target.Load()
	return old.Ordered == t.Ordered && l.d.concurrency(t) == l.concurrency && l.d.rate(t) == l.d.rate(*old)
}

func (l *loop) update(t endpoints.Target) { l.target.Store(&t) }

func (l *loop) stop() { l.cancel() }

func (l *loop) poke() {
	select {
	case l.wakeC <- struct{}{}:
	default:
	}
}

func (l *loop) finished() {
	select {
	case l.doneC <- struct{}{}:
	default:
	}
}

// run claims and sends until the loop is stopped, then gives back what it
// claimed and did not send, and waits for the requests in flight. It keeps
// up to buffered claimed deliveries ahead of its concurrency (each the head
// of its own key), so a claim's three statements serve many sends, not one.
func (l *loop) run() {
	defer l.busy.Wait()
	var (
		inflight atomic.Int32
		queue    []message
	)
	defer func() { l.giveBack(queue) }()
	for l.ctx.Err() == nil {
		wait, ok := l.breaker.allow(time.Now())
		if !ok {
			// Open: nothing goes, and what was claimed goes back, so it is
			// not held past its lease.
			queue = l.giveBack(queue)
			l.idle(wait)
			continue
		}
		slots := l.concurrency
		if l.breaker.probing() {
			slots = 1
		}
		if len(queue) < slots && int(inflight.Load()) < slots {
			batch, err := l.d.claim(l.ctx, l.target.Load(), l.claimSize(slots)-len(queue))
			if err != nil {
				if l.ctx.Err() == nil {
					l.d.log.Warn("claim deliveries", slog.String("event", "delivery.claim_failed"),
						slog.String("endpoint_id", l.target.Load().ID), slog.Any("error", err))
				}
				l.idle(time.Second)
				continue
			}
			queue = append(queue, batch...)
		}
		for len(queue) > 0 && int(inflight.Load()) < slots {
			m := queue[0]
			queue = queue[1:]
			inflight.Add(1)
			l.busy.Add(1)
			go func() {
				defer l.busy.Done()
				defer inflight.Add(-1)
				defer l.finished()
				l.deliver(m)
			}()
		}
		switch {
		case len(queue) == 0 && inflight.Load() == 0:
			l.unpark()
			l.idle(l.untilDue())
		case len(queue) > 0 || int(inflight.Load()) >= slots:
			l.idle(l.d.cfg.Poll) // until a send finishes
		}
	}
}

// claimSize is how many deliveries a claim asks for: the buffer while the
// breaker is closed, one while it probes.
func (l *loop) claimSize(slots int) int {
	if slots == 1 {
		return 1
	}
	return l.concurrency * bufferedPerSlot
}

// bufferedPerSlot is how many claimed deliveries a loop keeps per slot of
// its concurrency.
const bufferedPerSlot = 4

// giveBack returns claimed, unsent deliveries to Postgres, uncounted and
// due now, and returns the emptied queue.
func (l *loop) giveBack(queue []message) []message {
	if len(queue) == 0 {
		return queue
	}
	ids := make([]int64, len(queue))
	for i, m := range queue {
		ids[i] = m.id
	}
	if _, err := l.d.pool.Exec(context.WithoutCancel(l.ctx), releaseSQL, ids, time.Now()); err != nil {
		// Their leases run out instead.
		l.d.log.Warn("give back deliveries", slog.String("event", "delivery.release_failed"),
			slog.String("endpoint_id", l.target.Load().ID), slog.Any("error", err))
	}
	return queue[:0]
}

// idle waits for work, a finished delivery, or at most d.
func (l *loop) idle(d time.Duration) {
	t := time.NewTimer(max(d, time.Millisecond))
	defer t.Stop()
	select {
	case <-l.ctx.Done():
	case <-l.wakeC:
	case <-l.doneC:
	case <-t.C:
	}
}

// unpark wakes, at most once a Poll, parked deliveries left with no head
// before them (park.sql says how).
func (l *loop) unpark() {
	if time.Since(l.unparked) < l.d.cfg.Poll {
		return
	}
	l.unparked = time.Now()
	if _, err := l.d.pool.Exec(l.ctx, unparkSQL, l.target.Load().ID); err != nil && l.ctx.Err() == nil {
		l.d.log.Warn("unpark deliveries", slog.String("event", "delivery.unpark_failed"),
			slog.String("endpoint_id", l.target.Load().ID), slog.Any("error", err))
	}
}

// untilDue is how long until the endpoint's next delivery is due, at most
// Poll.
func (l *loop) untilDue() time.Duration {
	var next *time.Time
	if err := l.d.pool.QueryRow(l.ctx, nextDueSQL, l.target.Load().ID).Scan(&next); err != nil || next == nil {
		return l.d.cfg.Poll
	}
	return min(time.Until(*next), l.d.cfg.Poll)
}

// deliver sends m (honouring the endpoint's rate) and records the outcome.
// The loop's context ending interrupts the request: the delivery is then
// given back at once (its lease would hold its key until it ran out).
func (l *loop) deliver(m message) {
	t := l.target.Load()
	if l.limiter != nil {
		if err := l.limiter.Wait(l.ctx); err != nil {
			l.giveBack([]message{m})
			return
		}
	}
	a, retryAfter := l.d.send(l.ctx, t, m)
	if l.ctx.Err() != nil && !a.OK() {
		l.giveBack([]message{m})
		return
	}
	l.breaker.record(a.OK(), time.Now())
	l.recordPersistently(t, m, a, retryAfter)
}

// recordPersistently writes the outcome, trying again a few times over
// about three seconds when Postgres is away (a 2xx not recorded is sent
// again once its lease runs out, and holds its key until then).
func (l *loop) recordPersistently(t *endpoints.Target, m message, a endpoints.Attempt, retryAfter time.Duration) {
	ctx := context.WithoutCancel(l.ctx)
	wait := 100 * time.Millisecond
	for try := 1; ; try++ {
		err := l.d.record(ctx, t, m, a, retryAfter)
		if err == nil {
			return
		}
		if try == recordTries {
			l.d.log.Warn("record delivery", slog.String("event", "delivery.record_failed"),
				slog.String("endpoint_id", t.ID), slog.String("webhook_id", m.webhookID), slog.Int("tries", try), slog.Any("error", err))
			return
		}
		time.Sleep(wait)
		wait *= 2
	}
}

// recordTries bounds recordPersistently: 100+200+400+800+1600 ms of waits.
const recordTries = 6
