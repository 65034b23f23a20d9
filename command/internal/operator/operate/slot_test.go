package operate_test

import (
	"context"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/command/internal/operator/operate"
)

// The slot's status: absent before the relay made it, then its retained
// WAL once it exists.
func TestSlotStatusSaysWhetherTheSlotExists(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	slot := "operate_" + strings.ReplaceAll(b.topics.Prefix, ".", "_")
	op := operate.New(b.pool, nil, operate.Config{Topics: b.topics, Slot: slot})
	s, err := op.Slot(ctx, nil)
	if err != nil || s.Exists {
		t.Fatalf("slot before creation: %+v, %v", s, err)
	}
	if _, err := b.pool.Exec(ctx, `SELECT pg_create_logical_replication_slot($1, 'pgoutput')`, slot); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = b.pool.Exec(context.Background(), `SELECT pg_drop_replication_slot($1)`, slot) })
	if s, err = op.Slot(ctx, nil); err != nil || !s.Exists || s.Active || s.ConfirmedLSN == "" {
		t.Errorf("slot after creation: %+v, %v", s, err)
	}
}
