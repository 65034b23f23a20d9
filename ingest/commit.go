package ingest

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Outcome is what became of one delivery once its transaction committed.
type Outcome string

const (
	OutcomeAccepted    Outcome = "accepted"    // new inbox row, published
	OutcomeDuplicate   Outcome = "duplicate"   // same key, same content
	OutcomeConflict    Outcome = "conflict"    // same key, other content: kept aside
	OutcomeQuarantined Outcome = "quarantined" // failed its schema: kept with the reason
	OutcomeUnhandled   Outcome = "unhandled"   // no handler for the type yet: kept
)

var (
	// ErrOverloaded: the commit queue is full; answer 503 with Retry-After.
	ErrOverloaded = errors.New("ingest: commit queue full")
	// ErrNotCommitted: the commit failed or its outcome is unknown; the
	// provider must retry, and the event key makes the retry harmless.
	ErrNotCommitted = errors.New("ingest: delivery not committed")
)

// delivery is one authenticated request, ready to store.
type delivery struct {
	TenantID   string
	SourceID   string
	Account    string
	EventID    string
	EventType  string
	ObjectType string
	ObjectID   string
	EventTime  *time.Time
	Status     string // published, unhandled, quarantined
	Reason     string
	ReceivedAt time.Time
	Body       []byte
	Sum        [sha256.Size]byte
	// Outbox side, for published deliveries.
	Topic   *string
	Key     []byte
	Headers map[string]string
	Payload []byte // nil when the body travels by claim
}

type result struct {
	outcome Outcome
	inboxID int64
	err     error
}

type request struct {
	d    *delivery
	done chan result
}

// CommitConfig tunes group commit.
type CommitConfig struct {
	// Committers is how many transactions may be open at once. Default 4.
	Committers int
	// MaxBatch caps deliveries per transaction. Default 256.
	MaxBatch int
	// QueueSize bounds deliveries waiting for a committer; beyond it ingest
	// answers 503. Default 8192.
	QueueSize int
	// TenantQueueSize bounds one tenant's waiting deliveries, so a flood
	// fills its own queue, not everyone's. At least one /v1/events batch
	// (1,000). Default 2048.
	TenantQueueSize int
	// Timeout bounds one transaction. Default 5s.
	Timeout time.Duration
}

func (c CommitConfig) WithDefaults() CommitConfig {
	if c.Committers <= 0 {
		c.Committers = 4
	}
	if c.MaxBatch <= 0 {
		c.MaxBatch = 256
	}
	if c.QueueSize <= 0 {
		c.QueueSize = 8192
	}
	if c.TenantQueueSize <= 0 {
		c.TenantQueueSize = min(2048, c.QueueSize)
	}
	if c.Timeout <= 0 {
		c.Timeout = 5 * time.Second
	}
	return c
}

// committer is group commit: concurrent requests share transactions. It does
// not wait to fill a batch: a committer takes whatever is queued when it
// becomes free, so a lone request commits at once and a flood commits in
// large batches, each request answered only after its batch committed.
// Batches are filled round-robin across tenants (fairQueue).
type committer struct {
	pool    *pgxpool.Pool
	log     *slog.Logger
	cfg     CommitConfig
	metrics *metrics
	queue   *fairQueue
	wg      sync.WaitGroup
	// skipAttempts leaves out the duplicates' records; only benchmarks set
	// it, to measure what the delivery log costs.
	skipAttempts bool
}

func newCommitter(pool *pgxpool.Pool, log *slog.Logger, cfg CommitConfig, m *metrics) *committer {
	cfg = cfg.WithDefaults()
	return &committer{pool: pool, log: log, cfg: cfg, metrics: m, queue: newFairQueue(cfg.TenantQueueSize, cfg.QueueSize)}
}

func (c *committer) start() {
	for range c.cfg.Committers {
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			c.loop()
		}()
	}
}

// stop waits for every queued delivery to be committed. Call it after the
// HTTP server stopped handing in new ones.
func (c *committer) stop() {
	c.queue.close()
	c.wg.Wait()
}

func (c *committer) submit(ctx context.Context, d *delivery) result {
	return c.submitAll(ctx, d.TenantID, []*delivery{d})[0]
}

// submitAll queues deliveries of one tenant together (all or none) and
// waits for each one's result. They may commit in different transactions.
func (c *committer) submitAll(ctx context.Context, tenant string, ds []*delivery) []result {
	rs := make([]*request, len(ds))
	for i, d := range ds {
		rs[i] = &request{d: d, done: make(chan result, 1)}
	}
	out := make([]result, len(ds))
	if !c.queue.push(tenant, rs...) {
		for i := range out {
			out[i] = result{err: ErrOverloaded}
		}
		return out
	}
	for i, r := range rs {
		select {
		case out[i] = <-r.done:
		case <-ctx.Done():
			// The batch may still commit; the provider's retry will then
			// be a duplicate. What matters is never to say 2xx without
			// knowing.
			for j := i; j < len(out); j++ {
				out[j] = result{err: fmt.Errorf("%w: %w", ErrNotCommitted, ctx.Err())}
			}
			return out
		}
	}
	return out
}

func (c *committer) loop() {
	batch := make([]*request, 0, c.cfg.MaxBatch)
	for {
		var ok bool
		if batch, ok = c.queue.take(batch[:0], c.cfg.MaxBatch); !ok {
			return
		}
		c.commitBatch(batch)
	}
}

func (c *committer) commitBatch(batch []*request) {
	start := time.Now()
	results, err := c.writeWithin(batch)
	c.metrics.commitSeconds.Observe(time.Since(start).Seconds())
	c.metrics.batchSize.Observe(float64(len(batch)))
	if err != nil && len(batch) > 1 && refusedData(err) {
		// The database refused a delivery's data: one delivery it cannot
		// take must not fail the others (other tenants') sharing the
		// transaction, so each is committed alone.
		c.log.Warn("ingest batch refused, committing one by one", slog.Int("deliveries", len(batch)), slog.Any("error", err))
		for _, r := range batch {
			c.commitBatch([]*request{r})
		}
		return
	}
	if err != nil {
		c.log.Error("ingest commit failed", slog.Int("deliveries", len(batch)), slog.Any("error", err))
		for _, r := range batch {
			r.done <- result{err: fmt.Errorf("%w: %w", ErrNotCommitted, err)}
		}
		return
	}
	for i, r := range batch {
		r.done <- results[i]
	}
}

// refusedData reports an error about the data itself (SQLSTATE classes 22
// data exception, 23 integrity constraint, 54 program limit), which the same
// rows would hit again; not an outage or a timeout, where committing one by
// one would only multiply the wait.
func refusedData(err error) bool {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || len(pgErr.Code) < 2 {
		return false
	}
	switch pgErr.Code[:2] {
	case "22", "23", "54":
		return true
	}
	return false
}

func (c *committer) writeWithin(batch []*request) ([]result, error) {
	ctx, cancel := context.WithTimeout(context.Background(), c.cfg.Timeout)
	defer cancel()
	return c.write(ctx, batch)
}

// write runs one transaction for the whole batch. Deliveries are sorted by
// event key so concurrent batches take unique-index locks in one order and
// do not deadlock.
func (c *committer) write(ctx context.Context, batch []*request) ([]result, error) {
	slices.SortFunc(batch, func(a, b *request) int {
		return cmp.Or(cmp.Compare(a.d.SourceID, b.d.SourceID), cmp.Compare(a.d.Account, b.d.Account), cmp.Compare(a.d.EventID, b.d.EventID))
	})
	results := make([]result, len(batch))

	tx, err := c.pool.Begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("begin: %w", err)
	}
	defer tx.Rollback(context.Background()) //nolint:errcheck // after Commit it is a no-op

	var b pgx.Batch
	for _, r := range batch {
		d := r.d
		var headers []byte
		if d.Topic != nil {
			if headers, err = json.Marshal(d.Headers); err != nil {
				return nil, fmt.Errorf("encode headers: %w", err)
			}
		}
		b.Queue(acceptSQL, d.TenantID, d.SourceID, d.Account, d.EventID, d.EventType, d.ObjectType, d.ObjectID,
			d.EventTime, d.Status, d.Reason, d.Sum[:], d.Body, d.Topic, d.Key, headers, d.Payload)
	}
	var existing []int
	br := tx.SendBatch(ctx, &b)
	for i, r := range batch {
		var id int64
		switch err := br.QueryRow().Scan(&id); {
		case errors.Is(err, pgx.ErrNoRows):
			existing = append(existing, i)
		case err != nil:
			br.Close()
			return nil, fmt.Errorf("insert inbox: %w", err)
		default:
			results[i] = result{outcome: statusOutcome(r.d.Status), inboxID: id}
		}
	}
	if err := br.Close(); err != nil {
		return nil, fmt.Errorf("insert inbox: %w", err)
	}
	if len(existing) > 0 {
		if err := c.classify(ctx, tx, batch, existing, results); err != nil {
			return nil, err
		}
	}
	if !c.skipAttempts {
		if err := recordAttempts(ctx, tx, batch, results); err != nil {
			return nil, err
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, fmt.Errorf("commit: %w", err)
	}
	return results, nil
}

// classify tells duplicates from conflicts for deliveries whose event key
// was already taken, and keeps conflicting newcomers. The reads are
// pipelined, so a burst of redeliveries costs one round trip, not one each.
func (c *committer) classify(ctx context.Context, tx pgx.Tx, batch []*request, idx []int, results []result) error {
	var reads pgx.Batch
	for _, i := range idx {
		d := batch[i].d
		reads.Queue(existingSQL, d.SourceID, d.Account, d.EventID)
	}
	var conflicts pgx.Batch
	br := tx.SendBatch(ctx, &reads)
	for _, i := range idx {
		d := batch[i].d
		var (
			id   int64
			sum  []byte
			body []byte
		)
		if err := br.QueryRow().Scan(&id, &sum, &body); err != nil {
			br.Close()
			return fmt.Errorf("read existing event: %w", err)
		}
		if bytes.Equal(sum, d.Sum[:]) || sameJSON(body, d.Body) {
			results[i] = result{outcome: OutcomeDuplicate, inboxID: id}
			continue
		}
		conflicts.Queue(conflictSQL, id, d.Sum[:], d.Body)
		results[i] = result{outcome: OutcomeConflict, inboxID: id}
	}
	if err := br.Close(); err != nil {
		return fmt.Errorf("read existing event: %w", err)
	}
	if conflicts.Len() > 0 {
		if err := tx.SendBatch(ctx, &conflicts).Close(); err != nil {
			return fmt.Errorf("keep conflict: %w", err)
		}
	}
	return nil
}

// recordAttempts makes every attempt of the batch durable with its answer.
// A new event's record is its inbox row and a conflict's its conflict row,
// both already written; a duplicate's is a small row beside the original
// (see the delivery_log view), all of them in one statement.
func recordAttempts(ctx context.Context, tx pgx.Tx, batch []*request, results []result) error {
	var (
		inboxIDs []int64
		at       []time.Time
	)
	for i, r := range batch {
		if results[i].outcome == OutcomeDuplicate {
			inboxIDs = append(inboxIDs, results[i].inboxID)
			at = append(at, r.d.ReceivedAt)
		}
	}
	if len(inboxIDs) == 0 {
		return nil
	}
	if _, err := tx.Exec(ctx, attemptsSQL, inboxIDs, at); err != nil {
		return fmt.Errorf("record duplicate deliveries: %w", err)
	}
	return nil
}

func statusOutcome(status string) Outcome {
	switch status {
	case "quarantined":
		return OutcomeQuarantined
	case "unhandled":
		return OutcomeUnhandled
	default:
		return OutcomeAccepted
	}
}

// sameJSON reports whether two bodies hold the same JSON value: providers
// sometimes re-serialise a redelivery with other whitespace or key order.
func sameJSON(a, b []byte) bool {
	var va, vb any
	da, db := json.NewDecoder(bytes.NewReader(a)), json.NewDecoder(bytes.NewReader(b))
	da.UseNumber()
	db.UseNumber()
	if da.Decode(&va) != nil || db.Decode(&vb) != nil {
		return false
	}
	return reflect.DeepEqual(va, vb)
}
