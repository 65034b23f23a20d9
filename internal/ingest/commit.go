package ingest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"reflect"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/segmentio/encoding/json"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/sluicehq/sluice/internal/envelope"
	"github.com/sluicehq/sluice/internal/pg"
	"github.com/sluicehq/sluice/internal/refusal"
	"github.com/sluicehq/sluice/internal/store/inbox"
	"github.com/sluicehq/sluice/internal/telemetry"
)

// Outcome is what became of one delivery once its transaction committed.
type Outcome string

const (
	OutcomeAccepted    Outcome = "accepted"    // new inbox row, published (on the destinations topic for a type only endpoints take)
	OutcomeDuplicate   Outcome = "duplicate"   // same key, same content
	OutcomeConflict    Outcome = "conflict"    // same key, other content: kept aside
	OutcomeQuarantined Outcome = "quarantined" // failed its schema: kept with the reason
	OutcomeUnhandled   Outcome = "unhandled"   // no handler, schema or endpoint for the type yet: kept
	OutcomeWaiting     Outcome = "waiting"     // its resource is named through a link not known yet: kept, published once it is (links.go)
)

// status is the HTTP status a delivery of the outcome is answered: 200 for
// a duplicate (nothing new was stored), 202 for everything else.
func (o Outcome) status() int {
	if o == OutcomeDuplicate {
		return http.StatusOK
	}
	return http.StatusAccepted
}

// outcomeOf is what a new row of the status is answered: the status's own
// name, except that a published row is "accepted".
func outcomeOf(s inbox.Status) Outcome {
	switch s {
	case inbox.StatusQuarantined:
		return OutcomeQuarantined
	case inbox.StatusUnhandled:
		return OutcomeUnhandled
	case inbox.StatusWaiting:
		return OutcomeWaiting
	default:
		return OutcomeAccepted
	}
}

var (
	// ErrOverloaded: the commit queue is full; answer 503 with Retry-After.
	ErrOverloaded = refusal.Sub(refusal.Unavailable, "ingest_overloaded", "ingest: commit queue full")
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
	Status     inbox.Status
	Reason     string
	ReceivedAt time.Time
	Body       []byte
	Sum        [sha256.Size]byte
	JSONSum    []byte // jsonSum of the body; nil when it is not JSON
	// Outbox side, for published deliveries.
	Topic    *string
	Key      []byte
	Envelope envelope.Event // its headers
	Payload  []byte         // Body, or nil when the body travels by claim
	// Links are ids this event ties to its object; Wait is set when the
	// object is known only through such a link (links.go).
	Links []string
	Wait  *wait
	// VersionID is the tenant catalogue version that validated a
	// published event (0 for built-in types).
	VersionID int64
}

type result struct {
	outcome Outcome
	inboxID int64
	err     error
}

type request struct {
	ctx  context.Context // the HTTP request's: once it ends, nobody waits
	d    *delivery
	done chan result
}

// CommitConfig tunes group commit.
type CommitConfig struct {
	// Committers is how many transactions may be open at once. Default 1:
	// while it commits, the next batch gathers, so batches grow with load.
	// More committers make smaller batches and more transactions for the
	// same events, and take Postgres time the consumers of the same
	// database would use (measure with `make bench` before raising it).
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
	// Pool holds the committers' connections (pg.ConnectCommitter; one per
	// committer is enough, a batch's transactions run one after another);
	// nil: the service's pool.
	Pool *pgxpool.Pool
}

func (c CommitConfig) WithDefaults() CommitConfig {
	if c.Committers <= 0 {
		c.Committers = 1
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
	tracer  trace.Tracer // nil: tracing off
	wg      sync.WaitGroup
	// skipAttempts leaves out the duplicates' records; only benchmarks set
	// it, to measure what the delivery log costs.
	skipAttempts bool
	args         sync.Pool // *acceptArgs
}

func newCommitter(pool *pgxpool.Pool, log *slog.Logger, cfg CommitConfig, m *metrics, tracer trace.Tracer) *committer {
	cfg = cfg.WithDefaults()
	if cfg.Pool != nil {
		pool = cfg.Pool
	}
	return &committer{pool: pool, log: log, cfg: cfg, metrics: m, queue: newFairQueue(cfg.TenantQueueSize, cfg.QueueSize), tracer: tracer,
		args: sync.Pool{New: func() any { return &acceptArgs{} }}}
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
		rs[i] = &request{ctx: ctx, d: d, done: make(chan result, 1)}
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
		if batch = dropAbandoned(batch); len(batch) > 0 {
			c.commitBatch(batch)
		}
	}
}

// dropAbandoned leaves out requests whose client is gone: it was answered
// 5xx already (or never will be), so storing the delivery would only spend
// a transaction on work the provider will redo.
func dropAbandoned(batch []*request) []*request {
	kept := batch[:0]
	for _, r := range batch {
		if err := r.ctx.Err(); err != nil {
			r.done <- result{err: fmt.Errorf("%w: %w", ErrNotCommitted, err)}
			continue
		}
		kept = append(kept, r)
	}
	clear(batch[len(kept):])
	return kept
}

func (c *committer) commitBatch(batch []*request) {
	ctx, span := c.startCommit(batch)
	defer span.End()
	start := time.Now()
	results, err := c.writeWithin(ctx, batch)
	c.metrics.commitSeconds.Observe(time.Since(start).Seconds())
	c.metrics.batchSize.Observe(float64(len(batch)))
	if err != nil {
		span.SetStatus(codes.Error, err.Error())
	}
	if err != nil && len(batch) > 1 && pg.Classify(err) == pg.FaultData {
		// The database refused a delivery's data: one delivery it cannot
		// take must not fail the others (other tenants') sharing the
		// transaction, so each is committed alone.
		c.log.WarnContext(ctx, "ingest batch refused, committing one by one", slog.Int("deliveries", len(batch)), slog.Any("error", err))
		for _, r := range batch {
			c.commitBatch([]*request{r})
		}
		return
	}
	if err != nil {
		c.log.ErrorContext(ctx, "ingest commit failed", slog.Int("deliveries", len(batch)), slog.Any("error", err))
		for _, r := range batch {
			r.done <- result{err: fmt.Errorf("%w: %w", ErrNotCommitted, err)}
		}
		return
	}
	for i, r := range batch {
		r.done <- results[i]
	}
}

// startCommit starts the span of one group commit: a child of the first
// request it carries, so a lone request's trace holds its commit, linking
// every request, and linked from each request's span, so a trace shows the
// commit that served it and the commit whom it served. Off, it costs nothing.
func (c *committer) startCommit(batch []*request) (context.Context, trace.Span) {
	if c.tracer == nil {
		return telemetry.Start(context.Background(), nil, "")
	}
	links := make([]trace.Link, len(batch))
	for i, r := range batch {
		links[i] = trace.LinkFromContext(r.ctx)
	}
	parent := trace.ContextWithSpanContext(context.Background(), trace.SpanContextFromContext(batch[0].ctx))
	ctx, span := c.tracer.Start(parent, "ingest commit", trace.WithLinks(links...),
		trace.WithAttributes(attribute.Int("sluice.commit.deliveries", len(batch))))
	commit := trace.Link{SpanContext: span.SpanContext()}
	for _, r := range batch {
		trace.SpanFromContext(r.ctx).AddLink(commit)
	}
	return ctx, span
}

// writeWithin writes batch within the commit timeout. ctx carries the
// commit's span, never a request's cancellation: the batch serves many.
func (c *committer) writeWithin(ctx context.Context, batch []*request) ([]result, error) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	return c.write(ctx, batch)
}

// write stores a batch. The common case is one statement in its own
// transaction, one round trip (sql/accept.sql): new deliveries, duplicates
// and their attempt records. A batch with events that record or need links
// runs that statement and the links' in one transaction (links.go). What needs a second look (content that differs
// under a taken key, a second copy inside the batch, a key a concurrent batch
// took meanwhile) is settled in one more transaction. Each delivery's result
// is set only once the transaction holding its rows committed.
func (c *committer) write(ctx context.Context, batch []*request) ([]result, error) {
	results := make([]result, len(batch))
	done := make([]bool, len(batch))
	stored := map[int]storedContent{}
	var err error
	if linking(batch) {
		// Only batches with events that record or need links pay for a
		// transaction around the statement (links.go).
		err = pgx.BeginFunc(ctx, c.pool, func(tx pgx.Tx) error {
			if err := c.accept(ctx, tx.Conn(), batch, results, done, stored); err != nil {
				return err
			}
			return link(ctx, tx, batch, results)
		})
	} else {
		// The statement is its own transaction.
		err = c.pool.AcquireFunc(ctx, func(conn *pgxpool.Conn) error {
			return c.accept(ctx, conn.Conn(), batch, results, done, stored)
		})
	}
	if err != nil {
		return nil, err
	}
	var rest []int
	for i := range batch {
		if !done[i] {
			rest = append(rest, i)
		}
	}
	if len(rest) == 0 {
		return results, nil
	}
	if err := c.settle(ctx, batch, rest, stored, results); err != nil {
		return nil, err
	}
	return results, nil
}

// storedContent is what a taken key holds, as far as the hashes could not
// decide: decided is set when they did (duplicate or conflict), body is the
// stored body to compare as JSON otherwise (nil once it is gone: the bytes
// differ and nothing can show the JSON is the same, so a conflict keeps the
// newcomer for an operator rather than dropping it as a duplicate).
type storedContent struct {
	decided Outcome
	body    []byte
}

// outcome judges a delivery against what its key holds.
func (s storedContent) outcome(d *delivery) Outcome {
	switch {
	case s.decided != "":
		return s.decided
	case s.body != nil && sameJSON(s.body, d.Body):
		return OutcomeDuplicate
	default:
		return OutcomeConflict
	}
}

// accept runs sql/accept.sql for a batch on conn: results and done are set
// for the deliveries it answered, stored holds what it found under taken
// keys when the content differs. Its parameters are encoded by hand into
// buffers kept across batches (internal/pg.Params): a batch's bodies made
// pgx regrow its buffers from scratch for every statement.
func (c *committer) accept(ctx context.Context, conn *pgx.Conn, batch []*request, results []result, done []bool, stored map[int]storedContent) error {
	a := c.args.Get().(*acceptArgs)
	defer c.putArgs(a)
	if err := a.encode(batch, !c.skipAttempts); err != nil {
		return err
	}
	sd, err := conn.Prepare(ctx, "sluice_ingest_accept", acceptSQL)
	if err != nil {
		return fmt.Errorf("insert inbox: %w", err)
	}
	if len(sd.Fields) != 4 {
		return fmt.Errorf("insert inbox: %d result columns, want 4", len(sd.Fields))
	}
	rr := a.Exec(ctx, conn.PgConn(), sd.Name, acceptResultFormats)
	for rr.NextRow() {
		row := rr.Values()
		if len(row[0]) != 4 || len(row[1]) != 8 {
			rr.Close() //nolint:errcheck // the error below is the one to report
			return errors.New("insert inbox: malformed result row")
		}
		i, id := int32(binary.BigEndian.Uint32(row[0])), int64(binary.BigEndian.Uint64(row[1]))
		switch string(row[2]) {
		case "accepted":
			results[i], done[i] = result{outcome: outcomeOf(batch[i].d.Status), inboxID: id}, true
		case "duplicate":
			results[i], done[i] = result{outcome: OutcomeDuplicate, inboxID: id}, true
		case "conflict":
			results[i].inboxID, stored[int(i)] = id, storedContent{decided: OutcomeConflict}
		default: // differs: decided below, against the stored body
			var body []byte
			if row[3] != nil {
				body = bytes.Clone(row[3]) // the row's bytes are the connection's buffer
			}
			results[i].inboxID, stored[int(i)] = id, storedContent{body: body}
		}
	}
	// Reading every row and the command's completion means the statement
	// succeeded (and, run on its own, that its transaction committed).
	if _, err := rr.Close(); err != nil {
		return fmt.Errorf("insert inbox: %w", err)
	}
	return nil
}

// putArgs returns a to the pool without the batch's deliveries (their
// bodies), and without a buffer a batch of large bodies grew past 4 MiB.
func (c *committer) putArgs(a *acceptArgs) {
	clear(a.keep)
	clear(a.strs)
	clear(a.ptrs)
	clear(a.bufs)
	clear(a.tptrs)
	a.Trim(4 << 20)
	c.args.Put(a)
}

// acceptResultFormats: every column of sql/accept.sql's rows in binary.
var acceptResultFormats = []int16{pgtype.BinaryFormatCode, pgtype.BinaryFormatCode, pgtype.BinaryFormatCode, pgtype.BinaryFormatCode}

// settle classifies, in one transaction, the deliveries the accepting
// statement could not: each is a duplicate or a conflict of the row that
// holds its key.
func (c *committer) settle(ctx context.Context, batch []*request, idx []int, stored map[int]storedContent, results []result) error {
	tx, err := c.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer tx.Rollback(context.Background()) //nolint:errcheck // after Commit it is a no-op
	var lookups []int
	for _, i := range idx {
		if _, ok := stored[i]; !ok {
			lookups = append(lookups, i)
		}
	}
	if err := c.lookUp(ctx, tx, batch, lookups, stored, results); err != nil {
		return err
	}
	var (
		conflicts pgx.Batch
		dupIDs    []int64
		dupAt     []time.Time
	)
	for _, i := range idx {
		d := batch[i].d
		if stored[i].outcome(d) == OutcomeDuplicate {
			results[i].outcome = OutcomeDuplicate
			dupIDs, dupAt = append(dupIDs, results[i].inboxID), append(dupAt, d.ReceivedAt)
			continue
		}
		conflicts.Queue(conflictSQL, results[i].inboxID, receivedAt(d), d.Sum[:], d.Body)
		results[i].outcome = OutcomeConflict
	}
	if conflicts.Len() > 0 {
		if err := tx.SendBatch(ctx, &conflicts).Close(); err != nil {
			return fmt.Errorf("keep conflict: %w", err)
		}
	}
	if len(dupIDs) > 0 && !c.skipAttempts {
		if _, err := tx.Exec(ctx, attemptsSQL, dupIDs, dupAt); err != nil {
			return fmt.Errorf("record duplicate deliveries: %w", err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// lookUp reads the rows holding the keys of deliveries the accepting
// statement did not answer for, and judges them as it does.
func (c *committer) lookUp(ctx context.Context, tx pgx.Tx, batch []*request, idx []int, stored map[int]storedContent, results []result) error {
	if len(idx) == 0 {
		return nil
	}
	var reads pgx.Batch
	for _, i := range idx {
		d := batch[i].d
		reads.Queue(existingSQL, d.SourceID, d.Account, d.EventID)
	}
	br := tx.SendBatch(ctx, &reads)
	defer br.Close()
	for _, i := range idx {
		var (
			id              int64
			sum, jsum, body []byte
		)
		if err := br.QueryRow().Scan(&id, &sum, &jsum, &body); err != nil {
			return fmt.Errorf("read existing event: %w", err)
		}
		results[i].inboxID = id
		d := batch[i].d
		switch {
		case bytes.Equal(sum, d.Sum[:]) || (jsum != nil && bytes.Equal(jsum, d.JSONSum)):
			stored[i] = storedContent{decided: OutcomeDuplicate}
		case jsum != nil && d.JSONSum != nil:
			stored[i] = storedContent{decided: OutcomeConflict}
		default:
			stored[i] = storedContent{body: body}
		}
	}
	return br.Close()
}

// acceptArgs are a batch as the column arrays sql/accept.sql takes, encoded
// (pg.Params), with the scratch columns they are built from; kept in a pool
// so a committer's batches reuse them. A key seen earlier in the same batch
// is left out: the statement must not insert one key twice, and the later
// copy is classified against the first.
type acceptArgs struct {
	pg.Params
	keep    []*delivery
	strs    []string
	ptrs    []*string
	bufs    [][]byte
	times   []time.Time
	tptrs   []*time.Time
	flags   []bool
	arrival []int32
	ints    []int64
	seen    map[eventKey]bool
}

type eventKey struct{ source, account, id string }

// encode sets a's parameters for batch; attempts is $19 (record the
// duplicates' attempts).
func (a *acceptArgs) encode(batch []*request, attempts bool) error {
	a.Reset()
	if a.seen == nil {
		a.seen = map[eventKey]bool{}
	}
	clear(a.seen)
	a.keep, a.arrival = a.keep[:0], a.arrival[:0]
	for i, r := range batch {
		d := r.d
		k := eventKey{d.SourceID, d.Account, d.EventID}
		if a.seen[k] {
			continue
		}
		a.seen[k] = true
		a.keep, a.arrival = append(a.keep, d), append(a.arrival, int32(i))
	}
	// The columns gathered into scratch slices, reused from column to column.
	strs := func(field func(d *delivery) string) []string {
		a.strs = a.strs[:0]
		for _, d := range a.keep {
			a.strs = append(a.strs, field(d))
		}
		return a.strs
	}
	bufs := func(field func(d *delivery) []byte) [][]byte {
		a.bufs = a.bufs[:0]
		for _, d := range a.keep {
			a.bufs = append(a.bufs, field(d))
		}
		return a.bufs
	}
	if err := a.UUID(strs(func(d *delivery) string { return d.TenantID })); err != nil { // $1
		return err
	}
	if err := a.UUID(strs(func(d *delivery) string { return d.SourceID })); err != nil { // $2
		return err
	}
	a.Text(strs(func(d *delivery) string { return d.Account }))    // $3
	a.Text(strs(func(d *delivery) string { return d.EventID }))    // $4
	a.Text(strs(func(d *delivery) string { return d.EventType }))  // $5
	a.Text(strs(func(d *delivery) string { return d.ObjectType })) // $6
	a.Text(strs(func(d *delivery) string { return d.ObjectID }))   // $7
	a.tptrs = a.tptrs[:0]
	for _, d := range a.keep {
		a.tptrs = append(a.tptrs, d.EventTime)
	}
	a.NullTimestamptz(a.tptrs)                                         // $8
	a.Text(strs(func(d *delivery) string { return string(d.Status) })) // $9
	a.Text(strs(func(d *delivery) string { return d.Reason }))         // $10
	a.Bytea(bufs(func(d *delivery) []byte { return d.Sum[:] }))        // $11
	a.Bytea(bufs(func(d *delivery) []byte { return d.Body }))          // $12
	a.ptrs = a.ptrs[:0]
	for _, d := range a.keep {
		a.ptrs = append(a.ptrs, d.Topic)
	}
	a.NullText(a.ptrs)                                       // $13
	a.Bytea(bufs(func(d *delivery) []byte { return d.Key })) // $14
	a.TextEach(len(a.keep), func(i int, buf []byte) []byte { // $15
		if d := a.keep[i]; d.Topic != nil { // only published deliveries have an outbox row
			return d.Envelope.AppendOutboxHeaders(buf)
		}
		return buf
	})
	a.flags = a.flags[:0]
	for _, d := range a.keep {
		// The payload is the body or nothing: sent once, the statement's
		// parameters are half the size.
		a.flags = append(a.flags, d.Payload != nil)
	}
	a.Bool(a.flags)   // $16
	a.Int4(a.arrival) // $17
	a.times = a.times[:0]
	for _, d := range a.keep {
		a.times = append(a.times, receivedAt(d))
	}
	a.Timestamptz(a.times)                                       // $18
	a.BoolScalar(attempts)                                       // $19
	a.Bytea(bufs(func(d *delivery) []byte { return d.JSONSum })) // $20
	a.ints = a.ints[:0]
	for _, d := range a.keep {
		a.ints = append(a.ints, d.VersionID)
	}
	a.Int8(a.ints) // $21
	return nil
}

// receivedAt is when the delivery arrived, now if nobody said: the
// partition its payload and records go to.
func receivedAt(d *delivery) time.Time {
	if d.ReceivedAt.IsZero() {
		d.ReceivedAt = time.Now()
	}
	return d.ReceivedAt
}

// sameJSON reports whether two bodies hold the same JSON value: providers
// sometimes re-serialise a redelivery with other whitespace or key order.
func sameJSON(a, b []byte) bool {
	var va, vb any
	if _, err := json.Parse(a, &va, json.UseNumber); err != nil {
		return false
	}
	if _, err := json.Parse(b, &vb, json.UseNumber); err != nil {
		return false
	}
	return reflect.DeepEqual(va, vb)
}
