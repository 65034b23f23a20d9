package dispatch

import (
	"sync"
	"time"
)

// BreakerConfig tunes the circuit breaker in front of the service.
type BreakerConfig struct {
	// Failures is how many transient failures in a row open the breaker.
	// Default 5.
	Failures int
	// Cooldown is how long the breaker stays open before one probe may
	// go; every failed probe doubles it up to MaxCooldown. Defaults 5s and
	// 2m.
	Cooldown    time.Duration
	MaxCooldown time.Duration
}

func (c BreakerConfig) withDefaults() BreakerConfig {
	if c.Failures <= 0 {
		c.Failures = 5
	}
	if c.Cooldown <= 0 {
		c.Cooldown = 5 * time.Second
	}
	if c.MaxCooldown < c.Cooldown {
		c.MaxCooldown = max(2*time.Minute, c.Cooldown)
	}
	return c
}

// BreakerState is where the breaker stands.
type BreakerState int

const (
	// BreakerClosed: requests go.
	BreakerClosed BreakerState = iota
	// BreakerOpen: no request goes until the cooldown ends; every record
	// waits in its partition, in order, and other groups keep flowing.
	BreakerOpen
	// BreakerHalfOpen: one probe is out; its answer closes or reopens.
	BreakerHalfOpen
)

// breaker stops calling a service that keeps failing. Without it every
// partition of the group retries its head record against a dead service,
// each on its own backoff: a dozen callers hammering what is already down.
// It is shared by the group's partitions: one destination, one judgement.
type breaker struct {
	cfg     BreakerConfig
	onState func(BreakerState)

	mu        sync.Mutex
	state     BreakerState
	failures  int
	cooldown  time.Duration
	reopenAt  time.Time
	probeLent bool
}

func newBreaker(cfg BreakerConfig, onState func(BreakerState)) *breaker {
	cfg = cfg.withDefaults()
	if onState == nil {
		onState = func(BreakerState) {}
	}
	return &breaker{cfg: cfg, onState: onState, cooldown: cfg.Cooldown}
}

// allow says whether a request may go now; when not, how long to wait
// before asking again.
func (b *breaker) allow(now time.Time) (time.Duration, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch b.state {
	case BreakerOpen:
		if wait := b.reopenAt.Sub(now); wait > 0 {
			return wait, false
		}
		b.set(BreakerHalfOpen)
		b.probeLent = true
		return 0, true
	case BreakerHalfOpen:
		if b.probeLent {
			return b.cfg.Cooldown, false
		}
		b.probeLent = true
		return 0, true
	}
	return 0, true
}

// record takes a request's outcome: ok is any answer that shows the service
// is up (a 2xx, or a refusal of the request itself); a transient failure
// counts towards opening.
func (b *breaker) record(ok bool, now time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if ok {
		b.failures, b.cooldown, b.probeLent = 0, b.cfg.Cooldown, false
		if b.state != BreakerClosed {
			b.set(BreakerClosed)
		}
		return
	}
	switch b.state {
	case BreakerHalfOpen:
		b.cooldown = min(2*b.cooldown, b.cfg.MaxCooldown)
		b.open(now)
	case BreakerClosed:
		if b.failures++; b.failures >= b.cfg.Failures {
			b.open(now)
		}
	}
}

func (b *breaker) open(now time.Time) {
	b.reopenAt, b.probeLent = now.Add(b.cooldown), false
	b.set(BreakerOpen)
}

func (b *breaker) set(s BreakerState) {
	b.state = s
	b.onState(s)
}
