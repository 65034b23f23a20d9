package delivery

import (
	"testing"
	"time"
)

// The breaker opens after its failures, lets one probe through after the
// cooldown and doubles it when the probe fails; failures of requests sent
// before it opened change nothing (they kept a chaos run's endpoint shut
// for twice its cooldown).
func TestBreakerDoublesForFailedProbesOnly(t *testing.T) {
	b := newBreaker(3, 10*time.Second, time.Minute)
	t0 := time.Unix(1_000_000, 0)
	for i := range 3 {
		b.record(false, t0, t0.Add(time.Duration(i)*time.Millisecond))
	}
	if _, ok := b.allow(t0.Add(time.Second)); ok {
		t.Fatal("open after three failures: want nothing allowed")
	}
	opened := t0.Add(2 * time.Millisecond)
	b.record(false, t0, opened.Add(time.Millisecond)) // sent before it opened
	if _, ok := b.allow(opened.Add(10 * time.Second)); !ok {
		t.Fatal("a failure in flight before the opening moved the probe past the cooldown")
	}
	probe := opened.Add(10 * time.Second)
	b.record(false, probe, probe.Add(time.Second))
	if wait, ok := b.allow(probe.Add(2 * time.Second)); ok || wait < 18*time.Second {
		t.Fatalf("after a failed probe: allowed %v, wait %v; want the cooldown doubled", ok, wait)
	}
	b.record(true, probe.Add(30*time.Second), probe.Add(31*time.Second))
	if _, ok := b.allow(probe.Add(31 * time.Second)); !ok || b.probing() {
		t.Fatal("a success did not close it")
	}
}
