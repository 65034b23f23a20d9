package ingest

import (
	"errors"
	"sync"
)

// Unverified bounds the bytes held by requests whose signature has not been
// checked yet. A body must be held whole until its MAC is known, and anyone
// who knows a source id can send one, so without a bound 40 senders of 25
// MiB bodies to a GitHub source hold a gigabyte. Past a bound the request is
// refused before more of it is read: 503 when the process is at its bound
// (another instance may have room), 429 when one source is (the flood is
// aimed at it); both with Retry-After.
type Unverified struct {
	// MaxBytes bounds all unverified bodies of the process. Default 64 MiB.
	MaxBytes int64
	// MaxSourceBytes bounds one source's unverified bodies, so a flood aimed
	// at one source leaves room for every other source. Default 32 MiB: one
	// GitHub body at its 25 MiB cap fits.
	MaxSourceBytes int64
}

func (u Unverified) withDefaults() Unverified {
	if u.MaxBytes <= 0 {
		u.MaxBytes = 64 << 20
	}
	if u.MaxSourceBytes <= 0 {
		u.MaxSourceBytes = min(32<<20, u.MaxBytes)
	}
	return u
}

var (
	errBudgetProcess = errors.New("unverified bodies at the process's bound")
	errBudgetSource  = errors.New("unverified bodies at the source's bound")
)

// byteBudget is a counting semaphore of bytes, process-wide and per key. It
// never blocks: a request that does not fit is refused at once, so a slow
// flood cannot queue up goroutines either.
type byteBudget struct {
	limits Unverified

	mu    sync.Mutex
	used  int64
	byKey map[string]int64
}

func newByteBudget(limits Unverified) *byteBudget {
	return &byteBudget{limits: limits.withDefaults(), byKey: map[string]int64{}}
}

// reserve takes n bytes for key, or nothing and says which bound refused.
func (b *byteBudget) reserve(key string, n int64) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.byKey[key]+n > b.limits.MaxSourceBytes {
		return errBudgetSource
	}
	if b.used+n > b.limits.MaxBytes {
		return errBudgetProcess
	}
	b.used += n
	b.byKey[key] += n
	return nil
}

// release gives back n bytes of key.
func (b *byteBudget) release(key string, n int64) {
	if n == 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.used -= n
	if b.byKey[key] -= n; b.byKey[key] <= 0 {
		delete(b.byKey, key) // the map holds only sources with bytes in flight
	}
}

// held is what the budget has handed out, for metrics and tests.
func (b *byteBudget) held() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}
