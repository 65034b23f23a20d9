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
	pool, err := pg.Connect(context.Background(), ownDatabaseURL(tb), 4)
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

// ownDatabaseURL is the URL of a migrated database of the test's own.
func ownDatabaseURL(tb testing.TB) string {
	tb.Helper()
	db, err := testenv.Require(tb).NewDatabase(context.Background(), "ingestint")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(db.Drop)
	return db.URL
}

// commitEach writes n batches, each made by next, on c.
func commitEach(tb testing.TB, c *committer, n int, next func() []*request) {
	tb.Helper()
	for range n {
		if _, err := c.write(context.Background(), next()); err != nil {
			tb.Fatal(err)
		}
	}
}

// publishedDelivery is a new delivery of an invoice.paid event published
// on topic.
func publishedDelivery(tenant, source, eventID string, topic *string, body []byte) *delivery {
	return &delivery{TenantID: tenant, SourceID: source, Account: "acct", EventID: eventID,
		EventType: "invoice.paid", ObjectType: "invoice", ObjectID: "in_1", Status: "published", Body: body, Sum: sha256.Sum256(body),
		ReceivedAt: time.Now(), Topic: topic, Key: []byte("k"), Envelope: envelope.Event{ID: "evt"}, Payload: body}
}

// BenchmarkCommitBatch measures one group-commit transaction of 100
// deliveries, all new or all duplicates, with and without the duplicates'
// records, to show what the delivery log costs:
//
//	go test -run '^$' -bench CommitBatch -benchtime 200x ./ingest/
func BenchmarkCommitBatch(b *testing.B) {
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
						batch[i] = &request{d: publishedDelivery(tenant, source, fmt.Sprintf("%s_%d", prefix, seq), &topic, body)}
					}
					return batch
				}
				if dup {
					commitEach(b, c, 1, makeBatch)
				}
				b.ResetTimer()
				commitEach(b, c, b.N, makeBatch)
				b.ReportMetric(float64(b.N*batchSize)/b.Elapsed().Seconds(), "events/s")
			})
		}
	}
}

// BenchmarkCommitPlans measures one group commit of 1 and of 25
// deliveries on connections with Postgres's default plan choice and on
// the committers' own (pg.ConnectCommitter), to show what planning the
// accepting statement at every call costs a small batch:
//
//	go test -run '^$' -bench CommitPlans -benchtime 2000x ./ingest/
func BenchmarkCommitPlans(b *testing.B) {
	ctx := context.Background()
	url := ownDatabaseURL(b)
	tenant, source, topic := uuid.NewString(), uuid.NewString(), "bench.invoices"
	body := []byte(`{"id":"evt","type":"invoice.paid","data":{"object":{"id":"in_1","object":"invoice"}}}`)
	for _, pools := range []struct {
		name    string
		connect func(context.Context, string, int32) (*pgxpool.Pool, error)
	}{{"default", pg.Connect}, {"committer", pg.ConnectCommitter}} {
		for _, size := range []int{1, 25} {
			b.Run(fmt.Sprintf("%s/batch=%d", pools.name, size), func(b *testing.B) {
				pool, err := pools.connect(ctx, url, 1)
				if err != nil {
					b.Fatal(err)
				}
				defer pool.Close()
				c := newCommitter(pool, slog.New(slog.DiscardHandler), CommitConfig{}, newMetrics(prometheus.NewRegistry(), false), nil)
				prefix, seq := uuid.NewString(), 0
				makeBatch := func() []*request {
					batch := make([]*request, size)
					for i := range batch {
						seq++
						batch[i] = &request{d: publishedDelivery(tenant, source, fmt.Sprintf("%s_%d", prefix, seq), &topic, body)}
					}
					return batch
				}
				// Past the five custom plans Postgres makes before it
				// compares them with the generic one.
				commitEach(b, c, 10, makeBatch)
				b.ResetTimer()
				commitEach(b, c, b.N, makeBatch)
			})
		}
	}
}
