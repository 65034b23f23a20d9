package delivery_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	svix "github.com/svix/svix-webhooks/go"

	"github.com/sluicehq/sluice/internal/consumers/delivery"
	"github.com/sluicehq/sluice/internal/egress"
	"github.com/sluicehq/sluice/internal/keyring"
	"github.com/sluicehq/sluice/internal/standardwebhooks"
	"github.com/sluicehq/sluice/internal/store/endpoints"
)

// dispatchSecret signs the deployment endpoint's requests in these tests.
const dispatchSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

// The deployment's endpoint (--dispatch-url) is the operator's: it is sent
// to on loopback although the tenants' address rules refuse loopback, each
// request carries the intent's key as Idempotency-Key and webhook-id and
// verifies with Svix's library, and an answer lost after the service acted
// is sent again with the same key, the delivery recorded once; tenants'
// endpoints whose secrets do not open hold it back in no way.
func TestTheDeploymentsEndpointGetsEveryIntentWithItsKey(t *testing.T) {
	e := newEnv(t)
	wh, err := svix.NewWebhook(dispatchSecret)
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu       sync.Mutex
		requests = map[string]int{}
		bad      []string
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		key := r.Header.Get(delivery.IdempotencyKeyHeader)
		mu.Lock()
		requests[key]++
		n := requests[key]
		if key == "" || key != r.Header.Get("webhook-id") {
			bad = append(bad, "idempotency key "+key+" against webhook-id "+r.Header.Get("webhook-id"))
		}
		if err := wh.Verify(body, r.Header); err != nil {
			bad = append(bad, "signature: "+err.Error())
		}
		mu.Unlock()
		if key == "lost" && n == 1 {
			// The service acted; its answer never arrives.
			if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
				conn.Close()
			}
			return
		}
		w.WriteHeader(http.StatusAccepted)
	}))
	t.Cleanup(srv.Close)
	store := endpoints.Store{Pool: e.pool, Ring: e.ring}
	if err := store.EnsureDeploymentEndpoint(context.Background(), "test", srv.URL); err != nil {
		t.Fatal(err)
	}
	keys := []string{"first", "lost", "third"}
	for i, key := range keys {
		if _, err := e.pool.Exec(context.Background(), `WITH ins AS (
  INSERT INTO deliveries (endpoint_id, tenant_id, webhook_id, partition_key, payload, event_id, event_type, source, topic, partition, "offset")
  VALUES ($1, $2, $3, 'workspace/w1', '{"kind":"credits-granted"}', $3, 'sluice.email.credits_granted', '/s', 'n', 0, $4) RETURNING endpoint_id, id
) INSERT INTO pending_deliveries SELECT endpoint_id, id FROM ins`, endpoints.DeploymentEndpointID("test"), e.tenant, key, i); err != nil {
			t.Fatal(err)
		}
	}
	// A tenant's endpoint whose secret this key ring cannot open (sealed
	// under another) holds nothing else back.
	spec, _ := keyring.Generate()
	foreign, err := keyring.Parse(spec)
	if err != nil {
		t.Fatal(err)
	}
	var other string
	if err := e.pool.QueryRow(context.Background(), `INSERT INTO endpoints (tenant_id, url, filters) VALUES ($1, 'https://example.com', '{*}') RETURNING id::text`, e.tenant).Scan(&other); err != nil {
		t.Fatal(err)
	}
	keyID, sealed, err := foreign.Seal([]byte(dispatchSecret), []byte(other))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.pool.Exec(context.Background(), `INSERT INTO endpoint_secrets (endpoint_id, key_id, ciphertext) VALUES ($1, $2, $3)`, other, keyID, sealed); err != nil {
		t.Fatal(err)
	}
	key, err := standardwebhooks.Key(dispatchSecret)
	if err != nil {
		t.Fatal(err)
	}
	e.start(t, delivery.Config{
		Client:  egress.NewClient(egress.Config{ConnectTimeout: time.Second}), // loopback refused for tenants
		Timeout: 2 * time.Second, BackoffBase: 10 * time.Millisecond, Refresh: 20 * time.Millisecond, Poll: 20 * time.Millisecond,
		Deployment: &delivery.Deployment{EndpointID: endpoints.DeploymentEndpointID("test"), URL: srv.URL, Key: key, Client: &http.Client{Timeout: 2 * time.Second}},
	})
	e.waitFor(t, "every intent delivered", func() bool { return e.delivered(t) == len(keys) })
	mu.Lock()
	defer mu.Unlock()
	if len(bad) > 0 {
		t.Fatalf("bad requests: %v", bad)
	}
	for _, k := range keys {
		want := 1
		if k == "lost" {
			want = 2
		}
		if requests[k] != want {
			t.Errorf("%s: %d requests, want %d", k, requests[k], want)
		}
	}
}
