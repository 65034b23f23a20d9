package delivery

import (
	"context"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"

	"github.com/sluicehq/sluice/internal/store/endpoints"
)

// loop delivers to one endpoint this process owns. Its goroutine alone
// holds the endpoint's queue: it reads pending deliveries from Postgres
// (from the endpoint's mark when it starts, then the ranges the fan-out
// announces), sends what is due in goroutines of their own, up to the
// endpoint's concurrency, takes their outcomes back, and moves the mark
// (mark.go).
type loop struct {
	d      *Deliverer
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}
	target atomic.Pointer[endpoints.Target]

	concurrency int
	limiter     *rate.Limiter // nil: unlimited
	breaker     *breaker
	sender      sender // the target's kind's, for the loop's life

	notes   chan span   // ranges of ids the fan-out (or a retry) made pending
	results chan result // sends that finished
	rescanC chan struct{}
	busy    sync.WaitGroup
	// oldest is when the oldest delivery held was created, in Unix
	// nanoseconds (0: none), for the backlog's age.
	oldest atomic.Int64

	// Only the loop's goroutine touches these.
	q        *queue
	scanned  int64 // every pending id up to here was read once
	scanEnd  bool  // the last read of ids past scanned found no more
	inflight int
	refills  map[string]int64 // keys to read again, after these ids
	mark     mark
	prop     proposal
	lost     bool      // the mark is to be read again (takeover)
	tendAt   time.Time // the next poll's work
	redoAt   time.Time // the next read of retries' and replays' ranges
	pruneAt  time.Time // the next removal of old figures

	// Delivered deliveries, and when their outcome's write ended (zero:
	// not yet): a read whose snapshot may predate that still sees them
	// pending, so it must not hold them again.
	settlingMu sync.Mutex
	settling   map[int64]time.Time
}

// span is a range of delivery ids, both ends included.
type span struct{ lo, hi int64 }

// result is a finished send: delivered or dead (done), or to try again at
// due.
type result struct {
	it   *item
	done bool
	due  time.Time
}

const (
	// perKey is how many deliveries of one key a loop holds; later ones
	// are read when those are done.
	perKey = 8
	// held bounds a loop's memory: past it, reading waits until half of
	// what is held was sent.
	held = 2000
	// redoEvery: a loop reads the ranges of retries and replays again this
	// often (Polls).
	redoEvery = 12
	// soon: while a loop holds fewer, what it reads is sent soon, and is
	// read with its events' bodies (at most this many at a time, of at
	// most 64 KiB each); the rest are loaded as they are sent.
	soon = 64
)

func (d *Deliverer) newLoop(parent context.Context, t endpoints.Target) *loop {
	ctx, cancel := context.WithCancel(parent)
	c := d.concurrency(t)
	l := &loop{d: d, ctx: ctx, cancel: cancel, done: make(chan struct{}),
		concurrency: c, breaker: newBreaker(d.cfg.BreakerFailures, d.cfg.Cooldown, d.cfg.MaxCooldown),
		notes: make(chan span, 64), results: make(chan result, c), rescanC: make(chan struct{}, 1),
		q: newQueue(t.Ordered, perKey, held), refills: map[string]int64{}, settling: map[int64]time.Time{}, lost: true}
	if r := d.rate(t); r > 0 {
		l.limiter = rate.NewLimiter(rate.Limit(r), max(1, r/10))
	}
	l.target.Store(&t)
	l.sender = d.newSender(t, c)
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
// may change), and so is how a target that is not HTTP is reached (its
// sender holds a connection made from that).
func (l *loop) sameShape(t endpoints.Target) bool {
	old := l.target.Load()
	return old.Ordered == t.Ordered && l.d.concurrency(t) == l.concurrency && l.d.rate(t) == l.d.rate(*old) &&
		old.SameConnection(t)
}

func (l *loop) update(t endpoints.Target) {
	if cur := l.target.Load(); cur != nil && cur.RulesVersion > t.RulesVersion {
		// A send read newer rules than this read (newerRules): they stay.
		t.Transformation, t.RulesVersion = cur.Transformation, cur.RulesVersion
	}
	l.target.Store(&t)
}

// stop ends the loop and waits for it: requests in flight are interrupted
// and stay pending in Postgres, for the next owner.
func (l *loop) stop() {
	l.cancel()
	<-l.done
}

// note announces ids made pending; a loop that cannot take more notes
// reads everything again.
func (l *loop) note(s span) {
	select {
	case l.notes <- s:
	default:
		l.rescan()
	}
}

// rescan asks the loop to read the endpoint again from its mark (a
// notification may have been missed).
func (l *loop) rescan() {
	select {
	case l.rescanC <- struct{}{}:
	default:
	}
}

// settled records that the writes of ids' outcomes ended (committed, or
// given up: such a delivery is pending still, and held again by a read
// that starts after now).
func (l *loop) settled(ids []int64) {
	l.settlingMu.Lock()
	defer l.settlingMu.Unlock()
	now := time.Now()
	for _, id := range ids {
		if _, ok := l.settling[id]; ok {
			l.settling[id] = now
		}
	}
}

// run delivers until the loop is stopped, then waits for the requests in
// flight.
func (l *loop) run() {
	defer close(l.done)
	defer l.sender.close()
	defer l.busy.Wait()
	for l.ctx.Err() == nil {
		l.read()
		l.dispatch()
		l.tend(time.Now())
		l.wait()
	}
}

// read brings what Postgres holds into the queue: where the endpoint
// stands after a takeover, the keys whose held deliveries ran out, then
// pending ids past the scan while there is room.
func (l *loop) read() {
	if l.lost {
		if err := l.takeover(); err != nil {
			l.warn("read deliveries", "delivery.read_failed", err)
			return
		}
		l.lost = false
	}
	t := l.target.Load()
	for k, after := range l.refills {
		if err := l.refill(t, k, after); err != nil {
			l.warn("read deliveries", "delivery.read_failed", err)
			return
		}
		delete(l.refills, k)
	}
	if !l.scanEnd && l.q.len() <= held/2 {
		for !l.scanEnd && !l.q.full() && l.ctx.Err() == nil {
			want, since := held-l.q.len(), time.Now()
			bodies := l.q.len() < soon
			if bodies {
				want = min(want, soon)
			}
			msgs, err := l.d.pendingRange(l.ctx, t.ID, l.scanned+1, math.MaxInt64, want, bodies)
			if err != nil {
				l.warn("read deliveries", "delivery.read_failed", err)
				return
			}
			l.hold(msgs, since)
			if len(msgs) > 0 {
				l.scanned = msgs[len(msgs)-1].id
			}
			l.scanEnd = len(msgs) < want
		}
	}
}

// tend does an owner's work of every poll: it reads the ranges retries and
// replays moved back, looks past the scan for what no announcement told
// of, moves the endpoint's mark, keeps the backlog's age and, hourly,
// removes the endpoint's figures past their horizon.
func (l *loop) tend(now time.Time) {
	if now.Before(l.tendAt) || l.lost {
		return
	}
	l.tendAt = now.Add(l.d.cfg.Poll)
	l.scanEnd = false
	if now.After(l.redoAt) {
		// Announced at commit, so read at once; read again here for an
		// announcement missed, and to delete the ranges settled.
		l.redoAt = now.Add(redoEvery * l.d.cfg.Poll)
		if err := l.redo(); err != nil {
			l.warn("read retried deliveries", "delivery.read_failed", err)
		}
	}
	if err := l.advance(now); err != nil {
		l.warn("move the mark", "delivery.mark_failed", err)
	}
	var oldest int64
	if at := l.q.oldest(); !at.IsZero() {
		oldest = at.UnixNano()
	}
	l.oldest.Store(oldest)
	if now.After(l.pruneAt) {
		l.pruneAt = now.Add(time.Hour)
		if err := l.d.pruneMinutes(l.ctx, l.target.Load().ID); err != nil {
			l.warn("remove old figures", "delivery.prune_failed", err)
		}
	}
}

// refill reads key k's next deliveries after id, which its held ones left
// in Postgres.
func (l *loop) refill(t *endpoints.Target, k string, after int64) error {
	since := time.Now()
	n := perKey
	if !t.Ordered {
		n = held // a parked key's at takeover: unordered, nothing refills it later
	}
	msgs, err := l.d.keyAfter(l.ctx, t.ID, k, after, n)
	if err != nil {
		return err
	}
	l.q.reopen(k)
	l.hold(msgs, since)
	l.q.settle(k, len(msgs) == n)
	return nil
}

// hold puts deliveries read by a query sent at since in the queue, due
// when their row says, but those delivered whose outcome's write may have
// ended after the query's snapshot. Outcomes written before since are
// forgotten: every later read sees them. Those below the mark are parked
// already.
func (l *loop) hold(msgs []message, since time.Time) {
	l.settlingMu.Lock()
	defer l.settlingMu.Unlock()
	for _, m := range msgs {
		if at, ok := l.settling[m.id]; ok && (at.IsZero() || !at.Before(since)) {
			continue
		}
		m.parked = m.parked || m.id < l.mark.low
		l.q.add(m, m.nextAt)
	}
	for id, at := range l.settling {
		if !at.IsZero() && at.Before(since) {
			delete(l.settling, id)
		}
	}
}

// announced reads a range the fan-out or a retry made pending: the part
// the scan passed already now (a commit that came late, an old delivery
// sent again), the rest when the scan gets there.
func (l *loop) announced(s span) {
	if s.hi > l.scanned {
		l.scanEnd = false
	}
	if s.lo > l.scanned {
		return
	}
	since := time.Now()
	hi := min(s.hi, l.scanned)
	msgs, err := l.d.pendingRange(l.ctx, l.target.Load().ID, s.lo, hi, math.MaxInt32, l.q.len() < soon && hi-s.lo < soon)
	if err != nil {
		l.warn("read deliveries", "delivery.read_failed", err)
		l.lost = true
		return
	}
	l.hold(msgs, since)
}

// dispatch sends what is due, up to the free slots (one while the breaker
// lets a probe through).
func (l *loop) dispatch() {
	now := time.Now()
	if _, ok := l.breaker.allow(now); !ok {
		return
	}
	slots := l.concurrency
	if l.breaker.probing() {
		slots = 1
	}
	if l.inflight >= slots {
		return
	}
	batch := l.q.take(now, slots-l.inflight)
	if len(batch) == 0 {
		return
	}
	early, err := l.d.loadBodies(l.ctx, l.target.Load().TenantID, batch)
	if err != nil {
		l.warn("load bodies", "delivery.read_failed", err)
		for _, it := range batch {
			l.q.again(it, now.Add(time.Second))
		}
		return
	}
	for _, it := range early {
		l.q.again(it, now.Add(notVisibleYet))
	}
	for _, it := range batch {
		if it.sending { // not given back above
			l.inflight++
			l.busy.Add(1)
			go func() { defer l.busy.Done(); l.deliver(it) }()
		}
	}
}

// wait sleeps until something happens: an outcome, an announcement, a
// delivery due, the breaker's cooldown, or the poll.
func (l *loop) wait() {
	d := l.d.cfg.Poll
	if next, ok := l.q.nextDue(); ok {
		d = min(d, time.Until(next))
	}
	if w, ok := l.breaker.allow(time.Now()); !ok {
		d = max(d, w)
	}
	timer := time.NewTimer(max(d, time.Millisecond))
	defer timer.Stop()
	select {
	case <-l.ctx.Done():
	case r := <-l.results:
		l.finished(r)
	case s := <-l.notes:
		l.announced(s)
	case <-l.rescanC:
		l.lost = true
	case <-timer.C:
	}
}

// finished takes a send's outcome into the queue.
func (l *loop) finished(r result) {
	l.inflight--
	it := r.it
	if it.inboxID != nil {
		it.body = nil // read again for the next attempt, not held meanwhile
	}
	if !r.done {
		l.q.again(it, r.due)
		return
	}
	k, refill := l.q.finish(it)
	if refill {
		l.refills[k] = it.id
	}
}

// deliver sends one delivery (honouring the endpoint's rate), records the
// outcome and hands it back to the loop. The loop's end interrupts it: the
// delivery stays pending in Postgres for the next owner.
func (l *loop) deliver(it *item) {
	t := l.target.Load()
	if l.limiter != nil {
		if err := l.limiter.Wait(l.ctx); err != nil {
			return
		}
	}
	sent := time.Now()
	a, retryAfter := l.d.send(l.ctx, l.sender, t, it.message)
	if l.ctx.Err() != nil && !a.OK() {
		return
	}
	l.breaker.record(a.OK(), sent, time.Now())
	l.d.writer.figures.add(t.ID, a)
	r := result{it: it}
	if a.OK() {
		l.settlingMu.Lock()
		l.settling[it.id] = time.Time{}
		l.settlingMu.Unlock()
		l.d.delivered(l, t, it.message, a)
		r.done = true
	} else {
		r.due, r.done = l.recordFailure(t, it.message, a, retryAfter)
	}
	it.attempt++
	select {
	case l.results <- r:
	case <-l.ctx.Done():
	}
}

// recordFailure writes a failed attempt, trying again a few times over
// about three seconds when Postgres is away. It returns when to try the
// delivery again, or that it is dead. Not written, the delivery is tried
// again after the backoff anyway: the next outcome is written in its place.
func (l *loop) recordFailure(t *endpoints.Target, m message, a endpoints.Attempt, retryAfter time.Duration) (time.Time, bool) {
	ctx := context.WithoutCancel(l.ctx)
	next := l.d.nextTry(m, retryAfter)
	wait := 100 * time.Millisecond
	for try := 1; ; try++ {
		died, err := l.d.recordFailed(ctx, t, m, a, next)
		if err == nil {
			return next, died
		}
		if try == recordTries {
			l.d.log.Warn("record delivery", slog.String("event", "delivery.record_failed"),
				slog.String("endpoint_id", t.ID), slog.String("webhook_id", m.webhookID), slog.Int("tries", try), slog.Any("error", err))
			return next, false
		}
		time.Sleep(wait)
		wait *= 2
	}
}

// recordTries bounds the retries of an outcome's write: 100+200+400+800+1600
// ms of waits.
const recordTries = 6

func (l *loop) warn(msg, event string, err error) {
	if l.ctx.Err() == nil {
		l.d.log.Warn(msg, slog.String("event", event), slog.String("endpoint_id", l.target.Load().ID), slog.Any("error", err))
	}
}
