package operate_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluicehq/sluice/command/internal/operator/operate"
	"github.com/sluicehq/sluice/internal/refusal"
)

// The process keeps an hour of lag samples: the slot's retained WAL once
// the slot exists (a gap before), oldest first, the oldest overwritten
// past an hour's worth, and none for a scoped caller.
func TestSamplesKeepTheLastHour(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	slot := "lag_" + strings.ReplaceAll(b.topics.Prefix, ".", "_")
	op := operate.New(b.pool, nil, operate.Config{Topics: b.topics, Slot: slot})
	t0 := time.Now().Add(-2 * time.Hour).Truncate(time.Second)
	op.Sample(ctx, t0)
	if _, err := b.pool.Exec(ctx, `SELECT pg_create_logical_replication_slot($1, 'pgoutput')`, slot); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = b.pool.Exec(context.Background(), `SELECT pg_drop_replication_slot($1)`, slot) })
	op.Sample(ctx, t0.Add(operate.SampleEvery))
	h, err := op.Samples(nil, t0.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Samples) != 2 || h.Samples[0].SlotLagBytes != nil || h.Samples[1].SlotLagBytes == nil || h.Samples[0].Groups != nil || h.EverySeconds != 15 {
		t.Fatalf("history %+v: want a gap, then the slot's lag, and no groups (no Kafka here)", h)
	}
	// An hour and more of samples: the ring keeps the newest hour's.
	perHour := int(operate.OverviewWindow / operate.SampleEvery)
	for i := 2; i < perHour+10; i++ {
		op.Sample(ctx, t0.Add(time.Duration(i)*operate.SampleEvery))
	}
	last := t0.Add(time.Duration(perHour+9) * operate.SampleEvery)
	h, _ = op.Samples(nil, last)
	if len(h.Samples) != perHour || !h.Samples[len(h.Samples)-1].At.Equal(last) || !h.Samples[0].At.Equal(last.Add(-time.Duration(perHour-1)*operate.SampleEvery)) {
		t.Errorf("%d samples from %v to %v, want the newest %d up to %v", len(h.Samples), h.Samples[0].At, h.Samples[len(h.Samples)-1].At, perHour, last)
	}
	// Just past half an hour on, half of them are older than the window.
	if h, _ = op.Samples(nil, last.Add(30*time.Minute+time.Second)); len(h.Samples) != perHour/2 {
		t.Errorf("%d samples of the last hour half an hour later, want %d", len(h.Samples), perHour/2)
	}
	if _, err := op.Samples(&operate.Scope{TenantID: b.tenantA}, last); !errors.Is(err, refusal.ErrForbidden) {
		t.Errorf("a scoped caller: %v, want a forbidden refusal", err)
	}
}

// A sample sums ingest's answers by outcome from the process's registry,
// over kinds and codes; a process without them samples none.
func TestSamplesCountIngestsAnswersByOutcome(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	requests := prometheus.NewCounterVec(prometheus.CounterOpts{Name: operate.IngestAnswersMetric, Help: "h"}, []string{"kind", "code", "outcome"})
	reg.MustRegister(requests)
	requests.WithLabelValues("stripe", "202", "accepted").Add(3)
	requests.WithLabelValues("github", "202", "accepted").Add(2)
	requests.WithLabelValues("stripe", "401", "bad_signature").Inc()
	op := operate.New(nil, nil, operate.Config{Metrics: reg})
	now := time.Now()
	op.Sample(context.Background(), now)
	h, _ := op.Samples(nil, now)
	if len(h.Samples) != 1 || h.Samples[0].Answers["accepted"] != 5 || h.Samples[0].Answers["bad_signature"] != 1 || len(h.Samples[0].Answers) != 2 {
		t.Errorf("samples %+v, want 5 accepted and 1 bad_signature", h.Samples)
	}
	bare := operate.New(nil, nil, operate.Config{})
	bare.Sample(context.Background(), now)
	if h, _ := bare.Samples(nil, now); h.Samples[0].Answers != nil {
		t.Errorf("a process without ingest's counter sampled answers: %+v", h.Samples[0])
	}
}
