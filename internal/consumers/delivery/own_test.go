package delivery_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/sluicehq/sluice/internal/consumers/delivery"
	"github.com/sluicehq/sluice/internal/egress"
	"github.com/sluicehq/sluice/internal/telemetry"
)

// tagged sends every request with the name of the deliverer that made it.
type tagged struct {
	next http.RoundTripper
	name string
}

func (t tagged) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-Test-Deliverer", t.name)
	return t.next.RoundTrip(r)
}

// receipts is what a test server got: per endpoint path, the deliverers
// that sent to it and how often each webhook-id came.
type receipts struct {
	mu   sync.Mutex
	from map[string]map[string]bool
	ids  map[string]int
}

func (r *receipts) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.from[req.URL.Path] == nil {
		r.from[req.URL.Path] = map[string]bool{}
	}
	r.from[req.URL.Path][req.Header.Get("X-Test-Deliverer")] = true
	r.ids[req.Header.Get("webhook-id")]++
	w.WriteHeader(http.StatusNoContent)
}

// deliverer runs a deliverer named name until the returned stop is called
// (or the test ends).
func (e env) deliverer(t *testing.T, name string) (stop func()) {
	t.Helper()
	client := egress.NewClient(egress.Config{Policy: egress.Policy{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}, ConnectTimeout: time.Second})
	client.Transport = tagged{next: client.Transport, name: name}
	return e.start(t, delivery.Config{Client: client, Timeout: 2 * time.Second, BackoffBase: time.Hour,
		Refresh: 20 * time.Millisecond, Poll: 50 * time.Millisecond})
}

// enqueue writes n deliveries for endpoint id, each its own key, queued and
// announced as the fan-out does.
func (e env) enqueue(t *testing.T, id string, n int, tag string) {
	t.Helper()
	_, err := e.pool.Exec(context.Background(), `WITH ins AS (
  INSERT INTO deliveries (endpoint_id, tenant_id, webhook_id, partition_key, payload, event_id, event_type, source, topic, partition, "offset")
  SELECT $1::uuid, $2, 'msg_' || $4::text || '_' || g || '_' || $1::text, 'k' || g, '{}', 'evt', 't.x', '/s', 't', 0, g FROM generate_series(1, $3::int) g
  RETURNING endpoint_id, id
), q AS (INSERT INTO pending_deliveries SELECT endpoint_id, id FROM ins)
SELECT pg_notify('sluice_deliveries', $1::text || ' ' || min(id) || ' ' || max(id)) FROM ins`, id, e.tenant, n, tag)
	if err != nil {
		t.Fatal(err)
	}
}

// owners counts, per backend, the endpoints whose lock it holds.
func (e env) owners(t *testing.T) []int {
	t.Helper()
	rows, err := e.pool.Query(context.Background(), `SELECT count(*) FROM pg_locks
WHERE locktype = 'advisory' AND granted AND objsubid = 2
  AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
  AND classid::bigint = hashtext('sluice.deliver')::bigint & 4294967295 GROUP BY pid ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []int
	for rows.Next() {
		var n int
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		out = append(out, n)
	}
	return out
}

func (e env) waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if ok() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

func (e env) delivered(t *testing.T) int {
	t.Helper()
	var n int
	if err := e.pool.QueryRow(context.Background(), `SELECT count(*) FROM deliveries WHERE state = 'delivered'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// Two deliverers share the endpoints out, each endpoint owned by one of
// them: every delivery is sent once, each endpoint hears one deliverer.
// When one stops, the other takes its endpoints and delivers what they get.
func TestDeliverersShareEndpointsAndTakeOverAStoppedOnesShare(t *testing.T) {
	e := newEnv(t)
	got := &receipts{from: map[string]map[string]bool{}, ids: map[string]int{}}
	srv := httptest.NewServer(got)
	t.Cleanup(srv.Close)
	const endpointCount, each = 6, 25
	var ids []string
	for i := range endpointCount {
		ids = append(ids, e.newEndpoint(t, fmt.Sprintf("%s/%d", srv.URL, i)))
	}
	stopA := e.deliverer(t, "a")
	e.deliverer(t, "b")
	e.waitFor(t, "two deliverers owning three endpoints each", func() bool {
		o := e.owners(t)
		return len(o) == 2 && o[0] == 3 && o[1] == 3
	})
	for _, id := range ids {
		e.enqueue(t, id, each, "first")
	}
	e.waitFor(t, "the first deliveries", func() bool { return e.delivered(t) == endpointCount*each })
	got.mu.Lock()
	for path, from := range got.from {
		if len(from) != 1 {
			t.Errorf("endpoint %s heard %v: want one deliverer", path, from)
		}
	}
	for id, n := range got.ids {
		if n != 1 {
			t.Errorf("%s sent %d times", id, n)
		}
	}
	got.from = map[string]map[string]bool{}
	got.mu.Unlock()

	stopA()
	e.waitFor(t, "b owning every endpoint", func() bool {
		o := e.owners(t)
		return len(o) == 1 && o[0] == endpointCount
	})
	for _, id := range ids {
		e.enqueue(t, id, each, "second")
	}
	e.waitFor(t, "the second deliveries", func() bool { return e.delivered(t) == 2*endpointCount*each })
	got.mu.Lock()
	defer got.mu.Unlock()
	for path, from := range got.from {
		if len(from) != 1 || !from["b"] {
			t.Errorf("endpoint %s heard %v after a stopped: want b alone", path, from)
		}
	}
}

// A key with more pending deliveries than a loop holds of one key is sent
// whole and in order: its later ones are read as the held ones are done
// (no poll comes to the rescue here: it is an hour).
func TestABusyKeyIsSentWholeInOrder(t *testing.T) {
	e := newEnv(t)
	var (
		mu    sync.Mutex
		order []string
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		order = append(order, r.Header.Get("webhook-id"))
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	id := e.newEndpoint(t, srv.URL)
	const n = 50
	if _, err := e.pool.Exec(context.Background(), `WITH ins AS (
  INSERT INTO deliveries (endpoint_id, tenant_id, webhook_id, partition_key, payload, event_id, event_type, source, topic, partition, "offset")
  SELECT $1::uuid, $2, 'msg_' || lpad(g::text, 3, '0'), 'one', '{}', 'evt', 't.x', '/s', 't', 0, g FROM generate_series(1, $3::int) g
  ORDER BY g RETURNING endpoint_id, id
) INSERT INTO pending_deliveries SELECT endpoint_id, id FROM ins`, id, e.tenant, n); err != nil {
		t.Fatal(err)
	}
	client := egress.NewClient(egress.Config{Policy: egress.Policy{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}, ConnectTimeout: time.Second})
	e.start(t, delivery.Config{Client: client, Timeout: 2 * time.Second, BackoffBase: time.Hour, Refresh: time.Hour, Poll: time.Hour})
	e.waitFor(t, "every delivery of the key", func() bool { return e.delivered(t) == n })
	mu.Lock()
	defer mu.Unlock()
	for i, w := range order {
		if want := fmt.Sprintf("msg_%03d", i+1); w != want {
			t.Fatalf("request %d was %s, want %s (order %v)", i, w, want, order)
		}
	}
}

// With tracing on, each attempt is a client span in the event's trace, and
// the receiver's traceparent names that span.
func TestAnAttemptIsASpanOfTheEventsTrace(t *testing.T) {
	e := newEnv(t)
	var got http.Header
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = r.Header.Clone()
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	delivery0 := e.endpoint(t, srv.URL)
	const parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	if _, err := e.pool.Exec(context.Background(), `UPDATE deliveries SET traceparent = $2 WHERE id = $1`, delivery0, parent); err != nil {
		t.Fatal(err)
	}
	spans := tracetest.NewSpanRecorder()
	client := egress.NewClient(egress.Config{Policy: egress.Policy{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}, ConnectTimeout: time.Second})
	e.start(t, delivery.Config{Client: client, Timeout: 2 * time.Second, Refresh: 20 * time.Millisecond, Poll: 20 * time.Millisecond,
		Tracing: telemetry.Tracing{Provider: sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))}})
	e.waitFor(t, "the delivery", func() bool { return e.delivered(t) == 1 })
	var attempt sdktrace.ReadOnlySpan
	e.waitFor(t, "the attempt's span", func() bool {
		for _, s := range spans.Ended() {
			if s.Name() == "delivery POST" {
				attempt = s
				return true
			}
		}
		return false
	})
	if attempt.SpanKind() != trace.SpanKindClient || attempt.Parent().TraceID().String() != "4bf92f3577b34da6a3ce929d0e0e4736" ||
		attempt.Parent().SpanID().String() != "00f067aa0ba902b7" {
		t.Fatalf("attempt span %s kind %s, parent %s/%s: want a client span under the event's", attempt.Name(), attempt.SpanKind(),
			attempt.Parent().TraceID(), attempt.Parent().SpanID())
	}
	mu.Lock()
	defer mu.Unlock()
	sent := trace.SpanContextFromContext(propagation.TraceContext{}.Extract(context.Background(), propagation.HeaderCarrier(got)))
	if sent.TraceID() != attempt.SpanContext().TraceID() || sent.SpanID() != attempt.SpanContext().SpanID() {
		t.Fatalf("the receiver's traceparent %q names %s, want the attempt's span %s", got.Get("traceparent"), sent.SpanID(), attempt.SpanContext().SpanID())
	}
}
