package delivery

import (
	"sync"
	"time"
)

// breaker stops an endpoint's sends after consecutive failures: while
// open nothing is sent (its deliveries wait, in order); after the cooldown
// one probe decides, and each failed probe doubles the cooldown up to its
// bound. Requests already in flight when it opened are no probes: their
// failures neither double the cooldown nor restart it.
type breaker struct {
	failures              int
	cooldown, maxCooldown time.Duration

	mu       sync.Mutex
	streak   int
	wait     time.Duration
	openedAt time.Time
	open     bool
}

func newBreaker(failures int, cooldown, maxCooldown time.Duration) *breaker {
	return &breaker{failures: failures, cooldown: cooldown, maxCooldown: maxCooldown, wait: cooldown}
}

// allow says whether a claim may happen now, or how long to wait.
func (b *breaker) allow(now time.Time) (time.Duration, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.open {
		return 0, true
	}
	if left := b.openedAt.Add(b.wait).Sub(now); left > 0 {
		return left, false
	}
	return 0, true
}

// probing says whether the breaker lets only one request through.
func (b *breaker) probing() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.open
}

// record counts the outcome of an attempt sent at sent.
func (b *breaker) record(ok bool, sent, now time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if ok {
		b.streak, b.open, b.wait = 0, false, b.cooldown
		return
	}
	b.streak++
	switch {
	case b.open && sent.Before(b.openedAt):
		// In flight before it opened: not the probe.
	case b.open:
		b.wait = min(2*b.wait, b.maxCooldown)
		b.openedAt = now
	case b.streak >= b.failures:
		b.open, b.openedAt = true, now
	}
}
