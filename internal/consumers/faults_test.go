package consumers_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sluicehq/sluice/internal/consumers"
	"github.com/sluicehq/sluice/internal/consumers/consumertest"
	"github.com/sluicehq/sluice/internal/testenv"
)

// inserting writes one row per record with statement, whose $1 is the event id.
func inserting(statement string) consumers.Handler {
	return consumers.RecordFunc(func(ctx context.Context, tx pgx.Tx, rec consumers.Record) error {
		_, err := tx.Exec(ctx, statement, rec.Event.ID)
		return err
	})
}

// A batch whose COMMIT fails (a deferred constraint its writes violate) is
// not applied, so its offsets are never marked: a group stopped while it
// retries commits nothing past it, and the next owner starts from it.
func TestAFailedCommitMarksNoOffset(t *testing.T) {
	t.Parallel()
	env := consumertest.Shared(t)
	f := env.Tenant(t, "stripe")
	topic := env.Topic(t, "invoices", 1)
	s := testenv.RandomSuffix()
	parent, child := "commit_parent_"+s, "commit_child_"+s
	if _, err := env.Pool.Exec(context.Background(), fmt.Sprintf(`CREATE TABLE %[1]s (id text PRIMARY KEY);
		CREATE TABLE %[2]s (parent text REFERENCES %[1]s DEFERRABLE INITIALLY DEFERRED)`, parent, child)); err != nil {
		t.Fatal(err)
	}
	recs := env.Produce(t, consumertest.Invoices(f, topic, 3)...)
	h := inserting("INSERT INTO " + child + " VALUES ($1)") // no parent: refused at COMMIT only
	g := env.Run(t, consumers.Config{Topics: []string{topic}, Backoff: 10 * time.Millisecond, MaxBackoff: 50 * time.Millisecond}, h, nil)
	for _, err := range g.WaitFailures(t, 3, time.Minute) {
		if !strings.Contains(err.Error(), "commit") {
			t.Fatalf("attempt failed before its COMMIT: %v", err)
		}
	}
	g.Stop(t)

	offsets, err := env.Admin.FetchOffsets(context.Background(), g.ID)
	if err != nil {
		t.Fatal(err)
	}
	if o, ok := offsets.Lookup(topic, 0); ok && o.At > recs[0].Offset {
		t.Errorf("committed offset %d, past the first record (%d) of a batch whose COMMIT failed", o.At, recs[0].Offset)
	}
	if n := env.Count(t, "SELECT count(*) FROM "+child); n != 0 {
		t.Errorf("%d rows of a failed COMMIT", n)
	}
}

// The deployment at fault (a table the handler writes is missing, as after
// a deploy that ran ahead of its migration) is retried with backoff beyond
// MaxAttempts, counted, never dead-lettered; once the table exists the
// records flow, once each. Meanwhile the group is not ready, naming the
// fault (retries forever must not look like a stall), and ready again once
// the records flow.
func TestAMissingTableIsRetriedNotDeadLettered(t *testing.T) {
	t.Parallel()
	env := consumertest.Shared(t)
	f := env.Tenant(t, "stripe")
	topic := env.Topic(t, "invoices", 1)
	table := "deploy_" + testenv.RandomSuffix()
	recs := env.Produce(t, consumertest.Invoices(f, topic, 3)...)
	h := inserting("INSERT INTO " + table + " VALUES ($1)")
	g := env.Run(t, consumers.Config{Topics: []string{topic}, MaxAttempts: 2, Backoff: 10 * time.Millisecond, MaxBackoff: 50 * time.Millisecond}, h, nil)
	g.WaitFailures(t, 4, time.Minute) // twice MaxAttempts
	if n := consumertest.Metric(t, g.Registry, "sluice_consumer_deployment_errors_total"); n < 4 {
		t.Errorf("deployment errors counted %v, want at least 4", n)
	}
	if err := g.Ready(context.Background()); err == nil || !strings.Contains(err.Error(), "the deployment is at fault") ||
		!strings.Contains(err.Error(), table) || !strings.Contains(err.Error(), g.ID) {
		t.Errorf("readiness while the table is missing: %v, want the group, the fault and the table named", err)
	}
	if _, err := env.Pool.Exec(context.Background(), "CREATE TABLE "+table+" (event_id text PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	g.WaitMarked(t, time.Minute, recs[len(recs)-1])
	if err := g.Ready(context.Background()); err != nil {
		t.Errorf("readiness once the records flow: %v", err)
	}

	if n := env.Count(t, "SELECT count(*) FROM "+table); n != len(recs) {
		t.Errorf("rows = %d, want %d", n, len(recs))
	}
	if n := env.Count(t, `SELECT count(*) FROM dead_letters WHERE consumer_group = $1`, g.ID); n != 0 {
		t.Errorf("dead letters = %d, want 0", n)
	}
}
