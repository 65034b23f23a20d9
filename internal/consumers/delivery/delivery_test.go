package delivery_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sluicehq/sluice/internal/consumers/delivery"
	"github.com/sluicehq/sluice/internal/egress"
	"github.com/sluicehq/sluice/internal/keyring"
	"github.com/sluicehq/sluice/internal/pg"
	"github.com/sluicehq/sluice/internal/store/endpoints"
	"github.com/sluicehq/sluice/internal/testenv"
)

// env is a database of the test's own and a key ring.
type env struct {
	pool   *pgxpool.Pool
	url    string
	ring   *keyring.Ring
	tenant string
}

func newEnv(t *testing.T) env {
	t.Helper()
	ctx := context.Background()
	db, err := testenv.Require(t).NewDatabase(ctx, "delivery")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Drop)
	pool, err := pg.Connect(ctx, db.URL, 8)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	spec, _ := keyring.Generate()
	ring, err := keyring.Parse(spec)
	if err != nil {
		t.Fatal(err)
	}
	e := env{pool: pool, url: db.URL, ring: ring}
	if err := pool.QueryRow(ctx, `INSERT INTO tenants (name) VALUES ('t') RETURNING id::text`).Scan(&e.tenant); err != nil {
		t.Fatal(err)
	}
	return e
}

// newEndpoint makes an endpoint at url subscribed to everything, with a
// signing secret sealed by the env's ring, in one statement: a deliverer
// never sees it without its secret.
func (e env) newEndpoint(t *testing.T, url string) string {
	t.Helper()
	id := uuid.NewString()
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	keyID, sealed, err := e.ring.Seal([]byte("whsec_"+base64.StdEncoding.EncodeToString(key)), []byte(id))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.pool.Exec(context.Background(), `WITH ep AS (
  INSERT INTO endpoints (id, tenant_id, url, filters) VALUES ($1, $2, $3, '{*}') RETURNING id
) INSERT INTO endpoint_secrets (endpoint_id, key_id, ciphertext) SELECT id, $4, $5 FROM ep`, id, e.tenant, url, keyID, sealed); err != nil {
		t.Fatal(err)
	}
	return id
}

// endpoint makes an endpoint at url with one delivery pending, and returns
// the delivery's id.
func (e env) endpoint(t *testing.T, url string) int64 {
	t.Helper()
	ctx := context.Background()
	id := e.newEndpoint(t, url)
	var delivery int64
	if err := e.pool.QueryRow(ctx, `INSERT INTO deliveries (endpoint_id, tenant_id, webhook_id, partition_key, payload, event_id, event_type, source, topic, partition, "offset")
VALUES ($1, $2, 'msg_1', 'k', '{"a":1}', 'evt_1', 'sluice.test', '/tenants/t', 't', 0, 0) RETURNING id`, id, e.tenant).Scan(&delivery); err != nil {
		t.Fatal(err)
	}
	if _, err := e.pool.Exec(ctx, `INSERT INTO pending_deliveries (endpoint_id, id) VALUES ($1, $2)`, id, delivery); err != nil {
		t.Fatal(err)
	}
	return delivery
}

// run delivers with policy until the test ends.
func (e env) run(t *testing.T, policy egress.Policy) {
	t.Helper()
	e.start(t, delivery.Config{
		Client:  egress.NewClient(egress.Config{Policy: policy, ConnectTimeout: time.Second}),
		Timeout: 2 * time.Second, BackoffBase: time.Hour, Refresh: 20 * time.Millisecond, Poll: 20 * time.Millisecond,
	})
}

// start runs a deliverer with cfg over the test's database until the
// returned stop is called or the test ends.
func (e env) start(t *testing.T, cfg delivery.Config) (stop func()) {
	t.Helper()
	d := delivery.New(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), e.pool, endpoints.Store{Pool: e.pool, Ring: e.ring})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); <-done }) }
	t.Cleanup(stop)
	return stop
}

// attempted waits for delivery's first outcome: its state and the class
// of its failure ("" for a 2xx).
func (e env) attempted(t *testing.T, delivery int64) (string, string) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		var state, class string
		err := e.pool.QueryRow(context.Background(), `SELECT d.state, coalesce(a.error_class, '') FROM deliveries d
LEFT JOIN delivery_attempts a ON a.delivery_id = d.id WHERE d.id = $1`, delivery).Scan(&state, &class)
		if err != nil {
			t.Fatal(err)
		}
		if state == "delivered" || class != "" {
			return state, class
		}
	}
	t.Fatalf("delivery %d: no outcome", delivery)
	return "", ""
}

// counting is a server counting the requests it gets.
func counting(t *testing.T, addr string) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		n.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	if addr != "" {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		srv.Listener = l
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, &n
}

// Endpoints at internal addresses, in every spelling, and a name resolving
// to loopback are refused on the address dialled: the attempt says so and
// the server at that address hears nothing.
func TestDeliveriesToInternalAddressesAreRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	live, got := counting(t, "")
	_, port, _ := net.SplitHostPort(live.Listener.Addr().String())
	urls := []string{
		"http://127.0.0.1:" + port, "http://localhost:" + port, "http://[::ffff:127.0.0.1]:" + port,
		"http://10.0.0.1:" + port, "http://100.64.0.1:" + port, "http://169.254.169.254/latest/meta-data",
		"http://0.0.0.0:" + port, "http://[::1]:" + port,
	}
	ids := map[string]int64{}
	for _, u := range urls {
		ids[u] = e.endpoint(t, u)
	}
	e.run(t, egress.Policy{})
	for _, u := range urls {
		if state, class := e.attempted(t, ids[u]); state == "delivered" || class != egress.ClassRefusedAddress {
			t.Errorf("%s: %s, class %q, want refused_address", u, state, class)
		}
	}
	if n := got.Load(); n != 0 {
		t.Errorf("the loopback server got %d requests", n)
	}
}

// A redirect to an internal address is not followed, and a proxy from the
// environment is not used.
func TestDeliveriesFollowNoRedirectAndNoProxy(t *testing.T) {
	e := newEnv(t)
	internal, hit := counting(t, "")
	proxy, proxied := counting(t, "")
	t.Setenv("HTTP_PROXY", proxy.URL)
	t.Setenv("HTTPS_PROXY", proxy.URL)
	redirect := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, internal.URL, http.StatusFound)
	}))
	l, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Fatal(err)
	}
	redirect.Listener = l
	redirect.Start()
	t.Cleanup(redirect.Close)
	direct, reached := counting(t, "127.0.0.2:0")
	redirected, straight := e.endpoint(t, redirect.URL), e.endpoint(t, direct.URL)
	// Only 127.0.0.2 may be dialled: the redirect's target is not.
	e.run(t, egress.Policy{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.2/32")}})
	if state, class := e.attempted(t, redirected); state == "delivered" || class != "status" {
		t.Errorf("redirect: %s, class %q, want a failed attempt (a 3xx is an answer)", state, class)
	}
	if state, _ := e.attempted(t, straight); state != "delivered" {
		t.Errorf("direct endpoint: %s, want delivered", state)
	}
	if hit.Load() != 0 || proxied.Load() != 0 || reached.Load() != 1 {
		t.Errorf("internal server %d, proxy %d, endpoint %d requests; want 0, 0, 1", hit.Load(), proxied.Load(), reached.Load())
	}
}
