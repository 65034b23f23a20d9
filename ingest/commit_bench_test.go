package ingest

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluicehq/sluice/internal/envelope"
	"github.com/sluicehq/sluice/internal/pg"
	"github.com/sluicehq/sluice/internal/testenv"
)

// ownDatabase gives an in-package test its own migrated database (the
// package's TestMain database belongs to the external tests).
func ownDatabase(tb testing.TB) *pgxpool.Pool {
	tb.Helper()
	ctx := context.Background()
	db, err := testenv.Require(tb).NewDatabase(ctx, "ingestint")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(db.Drop)
	pool, err := pg.Connect(ctx, db.URL, 4)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(pool.Close)
	return pool
}

// A delivery the database refuses fails alone: the others sharing its
// transaction are committed one by one.
func TestRefusedDeliveryDoesNotFailItsBatch(t *testing.T) {
	t.Parallel()
	pool := ownDatabase(t)
	c := newCommitter(pool, slog.New(slog.DiscardHandler), CommitConfig{}, newMetrics(prometheus.NewRegistry(), false), nil)
	body := []byte(`{}`)
	mk := func(id, typ string) *request {
		return &request{d: &delivery{TenantID: uuid.NewString(), SourceID: uuid.NewString(), Account: "a", EventID: id, EventType: typ,
			Status: "unhandled", Body: body, Sum: sha256.Sum256(body), ReceivedAt: time.Now()}, done: make(chan result, 1)}
	}
	good, bad := mk("good", "thing.done"), mk("bad", "thing\x00done")
	c.commitBatch([]*request{good, bad})
	if res := <-good.done; res.err != nil || res.outcome != OutcomeUnhandled {
		t.Fatalf("good delivery: %+v", res)
	}
	if res := <-bad.done; !errors.Is(res.err, ErrNotCommitted) {
		t.Fatalf("refused delivery: %+v, want not committed", res)
	}
}

// BenchmarkCommitBatch measures one group-commit transaction of 100
// deliveries, all new or all duplicates, with and without the duplicates'
// records, to show what the delivery log costs:
//
//	go test -run '^$' -bench CommitBatch -benchtime 200x ./ingest/
func BenchmarkCommitBatch(b *testing.B) {
	ctx := context.Background()
	pool := ownDatabase(b)
	const batchSize = 100
	tenant, source := uuid.NewString(), uuid.NewString()
	body := []byte(`{"id":"evt","type":"invoice.paid","data":{"object":{"id":"in_1","object":"invoice"}}}`)
	topic := "bench.invoices"
	for _, dup := range []bool{false, true} {
		for _, attempts := range []bool{false, true} {
			b.Run(fmt.Sprintf("duplicates=%v/log=%v", dup, attempts), func(b *testing.B) {
				c := newCommitter(pool, slog.New(slog.DiscardHandler), CommitConfig{}, newMetrics(prometheus.NewRegistry(), false), nil)
				c.skipAttempts = !attempts
				prefix := uuid.NewString()
				seq := 0
				makeBatch := func() []*request {
					batch := make([]*request, batchSize)
					for i := range batch {
						if !dup {
							seq++
						} else {
							seq = i
						}
						batch[i] = &request{d: &delivery{TenantID: tenant, SourceID: source, Account: "acct", EventID: fmt.Sprintf("%s_%d", prefix, seq),
							EventType: "invoice.paid", ObjectType: "invoice", ObjectID: "in_1", Status: "published", Body: body, Sum: sha256.Sum256(body),
							ReceivedAt: time.Now(), Topic: &topic, Key: []byte("k"), Envelope: envelope.Event{ID: "evt"}, Payload: body}}
					}
					return batch
				}
				if dup {
					if _, err := c.write(ctx, makeBatch()); err != nil {
						b.Fatal(err)
					}
				}
				b.ResetTimer()
				for range b.N {
					if _, err := c.write(ctx, makeBatch()); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.N*batchSize)/b.Elapsed().Seconds(), "events/s")
			})
		}
	}
}
