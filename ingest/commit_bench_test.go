package ingest

import (
	"context"
	"crypto/sha256"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluicehq/sluice/internal/pg"
	"github.com/sluicehq/sluice/internal/testenv"
)

// BenchmarkCommitBatch measures one group-commit transaction of 100
// deliveries, all new or all duplicates, with and without the duplicates'
// records, to show what the delivery log costs:
//
//	go test -run '^$' -bench CommitBatch -benchtime 200x ./ingest/
func BenchmarkCommitBatch(b *testing.B) {
	ctx := context.Background()
	db, err := testenv.Require(b).NewDatabase(ctx, "ingestbench")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(db.Drop)
	pool, err := pg.Connect(ctx, db.URL, 4)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(pool.Close)
	const batchSize = 100
	tenant, source := uuid.NewString(), uuid.NewString()
	body := []byte(`{"id":"evt","type":"invoice.paid","data":{"object":{"id":"in_1","object":"invoice"}}}`)
	topic := "bench.invoices"
	for _, dup := range []bool{false, true} {
		for _, attempts := range []bool{false, true} {
			b.Run(fmt.Sprintf("duplicates=%v/log=%v", dup, attempts), func(b *testing.B) {
				c := newCommitter(pool, slog.New(slog.DiscardHandler), CommitConfig{}, newMetrics(prometheus.NewRegistry()))
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
							ReceivedAt: time.Now(), Topic: &topic, Key: []byte("k"), Headers: map[string]string{"ce_id": "evt"}, Payload: body}}
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
