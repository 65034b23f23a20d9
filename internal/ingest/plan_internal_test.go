package ingest

import (
	"context"
	"fmt"
	"log/slog"
	"testing"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluicehq/sluice/internal/pg"
)

// At moderate rates a group commit holds one or two deliveries, and
// Postgres's default would plan the accepting statement anew for each
// (a custom plan looks cheaper for one delivery), which costs more than
// running it. On the committers' own connections it is planned once.
func TestSmallGroupCommitsReuseOnePlan(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool, err := pg.ConnectCommitter(ctx, ownDatabaseURL(t), 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	c := newCommitter(nil, slog.New(slog.DiscardHandler), CommitConfig{Pool: pool}, newMetrics(prometheus.NewRegistry(), false), nil)
	tenant, source, topic := uuid.NewString(), uuid.NewString(), "plan.invoices"
	body := []byte(`{"id":"evt","type":"invoice.paid"}`)
	const commits = 12
	for i := range commits {
		results, err := c.write(ctx, []*request{{d: publishedDelivery(tenant, source, fmt.Sprintf("evt_%d", i), &topic, body)}})
		if err != nil || results[0].outcome != OutcomeAccepted {
			t.Fatalf("commit %d: %+v, %v", i, results, err)
		}
	}
	var generic, custom int64
	if err := pool.QueryRow(ctx, `SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE name = 'sluice_ingest_accept'`).
		Scan(&generic, &custom); err != nil {
		t.Fatal(err)
	}
	if custom != 0 || generic != commits {
		t.Fatalf("the accepting statement ran %d times on a generic plan and was planned for %d calls, want %d and 0", generic, custom, commits)
	}
	var stored int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM inbox i JOIN outbox o ON o.inbox_id = i.id WHERE i.source_id = $1`, source).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if stored != commits {
		t.Fatalf("%d inbox rows with their outbox rows, want %d", stored, commits)
	}
}
