package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/sluicehq/sluice/command/internal/pipeline"
	"github.com/sluicehq/sluice/internal/consumers"
	"github.com/sluicehq/sluice/internal/consumers/delivery"
	"github.com/sluicehq/sluice/internal/consumers/dispatch"
	"github.com/sluicehq/sluice/internal/egress"
	"github.com/sluicehq/sluice/internal/envelope"
	"github.com/sluicehq/sluice/internal/kafka"
	"github.com/sluicehq/sluice/internal/keyring"
	"github.com/sluicehq/sluice/internal/pg"
	"github.com/sluicehq/sluice/internal/provider/kinds"
	"github.com/sluicehq/sluice/internal/store/tenancy"
	"github.com/sluicehq/sluice/internal/telemetry"
	"github.com/sluicehq/sluice/internal/testenv"
)

// observed is a `sluice serve` pipeline of one test's own, watched from
// outside: its spans go to an in-memory exporter, its log records (every
// level) to a capture, and its dispatcher calls a receiver the test holds.
// It has its own database, slot and topics, so what it records is the
// test's alone.
type observed struct {
	baseURL   string
	secretKey string
	store     tenancy.Store
	spans     *tracetest.InMemoryExporter
	logs      *logCapture
	receiver  *receiver
	stop      func() // stops the pipeline and waits for it; once
}

// startObserved starts the pipeline; answer decides the receiver's status
// for each dispatched request.
func startObserved(t *testing.T, answer func(*http.Request) int) *observed {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	services := testenv.Require(t)
	db, err := services.NewDatabase(ctx, "observe")
	if err != nil {
		t.Fatal(err)
	}
	o := &observed{spans: tracetest.NewInMemoryExporter(), logs: &logCapture{}, receiver: newReceiver(t, answer)}
	provider := sdktrace.NewTracerProvider(sdktrace.WithSyncer(o.spans))
	secretKey, _ := keyring.Generate()
	suffix := testenv.RandomSuffix()
	topics := envelope.Topics{Prefix: "obs" + suffix + ".sluice"}
	cfg := pipeline.Config{
		DatabaseURL: db.URL, Kafka: kafka.Config{Brokers: services.Brokers}, SecretKey: secretKey,
		HTTPAddr: "127.0.0.1:0", AdminAddr: "127.0.0.1:0", Topics: topics,
		TopicSpec: kafka.TopicSpec{Partitions: 1, Retention: time.Hour},
		Ingest:    true, CDC: true, Consume: true,
		Consumer: consumers.Config{Backoff: 20 * time.Millisecond, MaxAttempts: 2},
		Dispatch: dispatch.Config{URL: o.receiver.url, Secret: dispatchSecret},
		Tracing:  telemetry.Tracing{Provider: provider},
		// The deliverer sends the dispatcher's intents.
		Deliver:  true,
		Delivery: delivery.Config{Client: egress.NewClient(egress.Config{})},
	}
	cfg.CDCConfig.Slot = "sluice_obs_" + suffix
	log := slog.New(telemetry.NewLogHandler(captureHandler{c: o.logs}))
	proc, err := pipeline.Start(ctx, cfg, log)
	if err != nil {
		cancel()
		db.Drop()
		t.Fatal(err)
	}
	pool, err := pg.Connect(ctx, db.URL, 4)
	if err != nil {
		t.Fatal(err)
	}
	o.stop = sync.OnceFunc(func() {
		cancel()
		if err := proc.Wait(); err != nil {
			t.Errorf("observed pipeline stopped with: %v", err)
		}
	})
	t.Cleanup(func() {
		o.stop()
		pool.Close()
		_ = provider.Shutdown(context.Background())
		deleteTopics(topics.Resource(""))
		db.Drop()
	})
	ring, _ := keyring.Parse(secretKey)
	o.baseURL, o.secretKey = "http://"+proc.Addr().String(), secretKey
	o.store = tenancy.Store{Pool: pool, Ring: ring, Providers: kinds.Builtin()}
	if err := waitForSlot(ctx, pool, cfg.CDCConfig.Slot, time.Minute); err != nil {
		t.Fatal(err)
	}
	return o
}

// post sends body to the pipeline's ingest URL of source with headers.
func (o *observed) post(t *testing.T, sourceID string, body []byte, headers map[string]string) int {
	t.Helper()
	return postTo(t, o.baseURL, sourceID, body, headers)
}

// receiver is the service the dispatcher calls.
type receiver struct {
	url      string
	mu       sync.Mutex
	requests []*http.Request
	bodies   [][]byte
}

func newReceiver(t *testing.T, answer func(*http.Request) int) *receiver {
	r := &receiver{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.requests = append(r.requests, req)
		r.bodies = append(r.bodies, body)
		r.mu.Unlock()
		w.WriteHeader(answer(req))
	}))
	t.Cleanup(srv.Close)
	r.url = srv.URL
	return r
}

// received returns the requests so far.
func (r *receiver) received() []*http.Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*http.Request(nil), r.requests...)
}

// logCapture is a slog handler keeping every record, with the attributes
// and groups its loggers were built with, as text to search.
type logCapture struct {
	mu      sync.Mutex
	records []string
}

// lines returns what was logged so far, one string per record.
func (c *logCapture) lines() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.records...)
}

// captureHandler is a logger's view of the capture: what WithAttrs and
// WithGroup added, written before each record's own attributes.
type captureHandler struct {
	c      *logCapture
	prefix string
}

func (h captureHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h captureHandler) Handle(_ context.Context, r slog.Record) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s %q %s", r.Level, r.Message, h.prefix)
	r.Attrs(func(a slog.Attr) bool {
		fmt.Fprintf(&b, " %s=%q", a.Key, a.Value.String())
		return true
	})
	h.c.mu.Lock()
	h.c.records = append(h.c.records, b.String())
	h.c.mu.Unlock()
	return nil
}

func (h captureHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	var b bytes.Buffer
	b.WriteString(h.prefix)
	for _, a := range attrs {
		fmt.Fprintf(&b, " %s=%q", a.Key, a.Value.String())
	}
	return captureHandler{c: h.c, prefix: b.String()}
}

func (h captureHandler) WithGroup(name string) slog.Handler {
	return captureHandler{c: h.c, prefix: h.prefix + " [" + name + "]"}
}
