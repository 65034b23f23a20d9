package operate

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// SampleEvery is how often a serving process samples the consumer
// groups' lag, the slot's retained WAL and ingest's answers for the
// overview's charts.
const SampleEvery = 15 * time.Second

// ProcessSample is the deployment at one moment, as this process sees it:
// each consumer group's lag (records behind), the relay slot's (WAL bytes
// retained) and the answers its ingest gave so far, by outcome. A part
// that could not be read then is absent, so a chart shows a gap, not a
// zero.
type ProcessSample struct {
	At           time.Time        `json:"at"`
	Groups       map[string]int64 `json:"groups,omitempty" doc:"Each consumer group's lag in records (-1: the group never ran); absent when Kafka was not read."`
	SlotLagBytes *int64           `json:"slot_lag_bytes,omitempty" doc:"WAL the relay's slot retained; absent when the slot was not read or does not exist."`
	Answers      map[string]int64 `json:"answers,omitempty" doc:"This process's ingest answers since it started, by outcome or rejection reason (sluice_ingest_requests_total summed over kind and code): the difference of two samples is what was answered between them; absent where it does not ingest."`
}

// IngestAnswersMetric is the counter whose outcomes a sample sums.
const IngestAnswersMetric = "sluice_ingest_requests_total"

// ProcessSamples is the samples of the last OverviewWindow, oldest first,
// taken by this process every EverySeconds (none before it started, nor
// from other processes).
type ProcessSamples struct {
	EverySeconds int             `json:"every_seconds"`
	Samples      []ProcessSample `json:"samples" nullable:"false"`
}

// sampleRing keeps the last samples in memory: an hour of them at
// SampleEvery, the oldest overwritten.
type sampleRing struct {
	mu      sync.Mutex
	samples []ProcessSample
	next    int
	full    bool
}

func newSampleRing(n int) *sampleRing { return &sampleRing{samples: make([]ProcessSample, n)} }

func (r *sampleRing) add(s ProcessSample) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.samples[r.next] = s
	r.next = (r.next + 1) % len(r.samples)
	r.full = r.full || r.next == 0
}

// since lists the samples taken at or after from, oldest first.
func (r *sampleRing) since(from time.Time) []ProcessSample {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := []ProcessSample{}
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

// SampleProcess samples the lag every so often until ctx ends (a serving
// process runs it beside its admin listener); each sample's reads are
// bounded by every.
func (o *Operator) SampleProcess(ctx context.Context, every time.Duration) error {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		read, cancel := context.WithTimeout(ctx, every)
		o.Sample(read, time.Now())
		cancel()
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// Sample records the lag as read now, stamped at: what could not be
// read (no Kafka in this process, the slot not made yet, an error) is left
// out of the sample.
func (o *Operator) Sample(ctx context.Context, at time.Time) {
	s := ProcessSample{At: at}
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
	if o.cfg.Metrics != nil {
		s.Answers = answers(o.cfg.Metrics)
	}
	o.lags.add(s)
}

// answers sums the ingest counter by outcome; nil when the process has
// none (it does not ingest) or the registry cannot be read.
func answers(g prometheus.Gatherer) map[string]int64 {
	families, err := g.Gather()
	if err != nil {
		return nil
	}
	for _, f := range families {
		if f.GetName() != IngestAnswersMetric {
			continue
		}
		out := map[string]int64{}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "outcome" {
					out[l.GetValue()] += int64(m.GetCounter().GetValue())
				}
			}
		}
		return out
	}
	return nil
}

// Samples returns the samples of the OverviewWindow before now.
// Unscoped callers only: the groups and the slot carry every tenant.
func (o *Operator) Samples(scope *Scope, now time.Time) (ProcessSamples, error) {
	if err := unscopedOnly(scope); err != nil {
		return ProcessSamples{}, err
	}
	return ProcessSamples{EverySeconds: int(SampleEvery / time.Second), Samples: o.lags.since(now.Add(-OverviewWindow))}, nil
}
