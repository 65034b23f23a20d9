package operate

import (
	"context"
	"sync"
	"time"
)

// LagSampleEvery is how often a serving process samples the consumer
// groups' lag and the slot's retained WAL for the overview's charts.
const LagSampleEvery = 15 * time.Second

// LagSample is the deployment's lag at one moment: each consumer group's
// (records behind) and the relay slot's (WAL bytes retained). A part that
// could not be read then is absent, so a chart shows a gap, not a zero.
type LagSample struct {
	At           time.Time        `json:"at"`
	Groups       map[string]int64 `json:"groups,omitempty" doc:"Each consumer group's lag in records (-1: the group never ran); absent when Kafka was not read."`
	SlotLagBytes *int64           `json:"slot_lag_bytes,omitempty" doc:"WAL the relay's slot retained; absent when the slot was not read or does not exist."`
}

// LagHistory is the samples of the last OverviewWindow, oldest first,
// taken by this process every EverySeconds (none before it started, nor
// from other processes).
type LagHistory struct {
	EverySeconds int         `json:"every_seconds"`
	Samples      []LagSample `json:"samples" nullable:"false"`
}

// lagRing keeps the last samples in memory: an hour of them at
// LagSampleEvery, the oldest overwritten.
type lagRing struct {
	mu      sync.Mutex
	samples []LagSample
	next    int
	full    bool
}

func newLagRing(n int) *lagRing { return &lagRing{samples: make([]LagSample, n)} }

func (r *lagRing) add(s LagSample) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.samples[r.next] = s
	r.next = (r.next + 1) % len(r.samples)
	r.full = r.full || r.next == 0
}

// since lists the samples taken at or after from, oldest first.
func (r *lagRing) since(from time.Time) []LagSample {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := []LagSample{}
	start, n := 0, r.next
	if r.full {
		start, n = r.next, len(r.samples)
	}
	for i := range n {
		s := r.samples[(start+i)%len(r.samples)]
		if !s.At.Before(from) {
			out = append(out, s)
		}
	}
	return out
}

// SampleLags samples the lag every so often until ctx ends (a serving
// process runs it beside its admin listener); each sample's reads are
// bounded by every.
func (o *Operator) SampleLags(ctx context.Context, every time.Duration) error {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		read, cancel := context.WithTimeout(ctx, every)
		o.SampleLag(read, time.Now())
		cancel()
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// SampleLag records the lag as read now, stamped at: what could not be
// read (no Kafka in this process, the slot not made yet, an error) is left
// out of the sample.
func (o *Operator) SampleLag(ctx context.Context, at time.Time) {
	s := LagSample{At: at}
	if o.admin != nil {
		if lags, err := o.ConsumerGroups(ctx, nil); err == nil {
			s.Groups = map[string]int64{}
			for _, g := range lags {
				s.Groups[g.Group] = g.Lag
			}
		}
	}
	if o.pool != nil {
		if slot, err := o.Slot(ctx, nil); err == nil && slot.Exists {
			s.SlotLagBytes = &slot.LagBytes
		}
	}
	o.lags.add(s)
}

// LagHistory returns the samples of the OverviewWindow before now.
// Unscoped callers only: the groups and the slot carry every tenant.
func (o *Operator) LagHistory(scope *Scope, now time.Time) (LagHistory, error) {
	if err := unscopedOnly(scope); err != nil {
		return LagHistory{}, err
	}
	return LagHistory{EverySeconds: int(LagSampleEvery / time.Second), Samples: o.lags.since(now.Add(-OverviewWindow))}, nil
}
