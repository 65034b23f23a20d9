package dispatch

import (
	"testing"
	"time"
)

// The breaker's states, step by step: it opens at the threshold, lends one
// probe when the cooldown ends and holds the rest back, doubles its
// cooldown when the probe fails and closes when one succeeds.
func TestBreakerOpensProbesAndCloses(t *testing.T) {
	t.Parallel()
	var states []BreakerState
	b := newBreaker(BreakerConfig{Failures: 2, Cooldown: time.Second, MaxCooldown: 3 * time.Second}, func(s BreakerState) { states = append(states, s) })
	now := time.Unix(0, 0)
	step := func(d time.Duration) { now = now.Add(d) }
	allowed := func() bool { _, ok := b.allow(now); return ok }

	b.record(false, now)
	if !allowed() {
		t.Fatal("open after one failure of two")
	}
	b.record(false, now)
	if wait, ok := b.allow(now); ok || wait != time.Second {
		t.Fatalf("after the threshold: allowed %v, wait %s; want held back for the cooldown", ok, wait)
	}
	step(time.Second)
	if !allowed() {
		t.Fatal("no probe after the cooldown")
	}
	if allowed() {
		t.Fatal("a second request went while the probe is out")
	}
	b.record(false, now) // the probe failed: open again, for twice as long
	step(time.Second)
	if allowed() {
		t.Fatal("reopened for the same cooldown, want it doubled")
	}
	step(time.Second)
	if !allowed() {
		t.Fatal("no probe after the doubled cooldown")
	}
	b.record(true, now)
	if !allowed() || !allowed() {
		t.Fatal("still holding back after a successful probe")
	}
	want := []BreakerState{BreakerOpen, BreakerHalfOpen, BreakerOpen, BreakerHalfOpen, BreakerClosed}
	if len(states) != len(want) {
		t.Fatalf("states %v, want %v", states, want)
	}
	for i := range want {
		if states[i] != want[i] {
			t.Fatalf("states %v, want %v", states, want)
		}
	}
}
