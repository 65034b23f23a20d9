package operate_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/operator/operate"
)

// The process keeps an hour of lag samples: the slot's retained WAL once
// the slot exists (a gap before), oldest first, the oldest overwritten
// past an hour's worth, and none for a scoped caller.
func TestLagSamplesKeepTheLastHour(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	slot := "lag_" + strings.ReplaceAll(b.topics.Prefix, ".", "_")
	op := operate.New(b.pool, nil, operate.Config{Topics: b.topics, Slot: slot})
	t0 := time.Now().Add(-2 * time.Hour).Truncate(time.Second)
	op.SampleLag(ctx, t0)
	if _, err := b.pool.Exec(ctx, `SELECT pg_create_logical_replication_slot($1, 'pgoutput')`, slot); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = b.pool.Exec(context.Background(), `SELECT pg_drop_replication_slot($1)`, slot) })
	op.SampleLag(ctx, t0.Add(operate.LagSampleEvery))
	h, err := op.LagHistory(nil, t0.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Samples) != 2 || h.Samples[0].SlotLagBytes != nil || h.Samples[1].SlotLagBytes == nil || h.Samples[0].Groups != nil || h.EverySeconds != 15 {
		t.Fatalf("history %+v: want a gap, then the slot's lag, and no groups (no Kafka here)", h)
	}
	// An hour and more of samples: the ring keeps the newest hour's.
	perHour := int(operate.OverviewWindow / operate.LagSampleEvery)
	for i := 2; i < perHour+10; i++ {
		op.SampleLag(ctx, t0.Add(time.Duration(i)*operate.LagSampleEvery))
	}
	last := t0.Add(time.Duration(perHour+9) * operate.LagSampleEvery)
	h, _ = op.LagHistory(nil, last)
	if len(h.Samples) != perHour || !h.Samples[len(h.Samples)-1].At.Equal(last) || !h.Samples[0].At.Equal(last.Add(-time.Duration(perHour-1)*operate.LagSampleEvery)) {
		t.Errorf("%d samples from %v to %v, want the newest %d up to %v", len(h.Samples), h.Samples[0].At, h.Samples[len(h.Samples)-1].At, perHour, last)
	}
	// Just past half an hour on, half of them are older than the window.
	if h, _ = op.LagHistory(nil, last.Add(30*time.Minute+time.Second)); len(h.Samples) != perHour/2 {
		t.Errorf("%d samples of the last hour half an hour later, want %d", len(h.Samples), perHour/2)
	}
	if _, err := op.LagHistory(&operate.Scope{TenantID: b.tenantA}, last); !errors.Is(err, operate.ErrUnscopedOnly) {
		t.Errorf("a scoped caller: %v, want ErrUnscopedOnly", err)
	}
}
