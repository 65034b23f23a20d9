package ingest_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stripe/stripe-go/v82/webhook"

	"github.com/sluicehq/sluice/internal/envelope"
	"github.com/sluicehq/sluice/internal/ingest"
	"github.com/sluicehq/sluice/internal/keyring"
	"github.com/sluicehq/sluice/internal/pg"
	"github.com/sluicehq/sluice/internal/store/tenancy"
	"github.com/sluicehq/sluice/internal/testenv"
	"github.com/sluicehq/sluice/schemas"
)

// bundle is one test's ingest service over the package's database.
type bundle struct {
	pool     *pgxpool.Pool // direct, for assertions
	store    tenancy.Store
	srv      *httptest.Server
	svc      *ingest.Service
	reg      *prometheus.Registry // the service's metrics
	tenantID string
	sourceID string
	secret   string
}

// dbURL is the package's own database, made by TestMain.
var dbURL string

func TestMain(m *testing.M) { os.Exit(testenv.RunWithDatabase(m, "ingest", &dbURL)) }

// setup gives each test its own ingest service, tenant and Stripe source, on
// the package's database.
func setup(t *testing.T, cfg ingest.Config) *bundle {
	t.Helper()
	return setupVia(t, cfg, dbURL)
}

// setupVia is setup with the service reaching Postgres at serviceURL (e.g.
// through a proxy the test cuts); assertions still use the direct URL.
func setupVia(t *testing.T, cfg ingest.Config, serviceURL string) *bundle {
	t.Helper()
	return setupWith(t, cfg, serviceURL)
}

// setupWith is setupVia with event types of kinds cfg.Providers adds.
func setupWith(t *testing.T, cfg ingest.Config, serviceURL string, schemaFiles ...fs.FS) *bundle {
	t.Helper()
	return setupIn(t, cfg, dbURL, serviceURL, schemaFiles...)
}

// setupIn is setupWith on another database than the package's (databaseURL,
// for tests that change what every other test relies on, such as dropping
// the current partitions).
func setupIn(t *testing.T, cfg ingest.Config, databaseURL, serviceURL string, schemaFiles ...fs.FS) *bundle {
	t.Helper()
	ctx := context.Background()
	pool, err := pg.Connect(ctx, databaseURL, 4)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	servicePool := pool
	if serviceURL != databaseURL {
		if servicePool, err = pg.Connect(ctx, serviceURL, 8); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(servicePool.Close)
	}
	if cfg.Commit.Pool == nil {
		// The group commits' own connections, as the stages run them.
		commits, err := pg.ConnectCommitter(ctx, serviceURL, int32(cfg.Commit.WithDefaults().Committers))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(commits.Close)
		cfg.Commit.Pool = commits
	}
	key, _ := keyring.Generate()
	ring, _ := keyring.Parse(key)
	catalogue, err := schemas.Load(schemaFiles...)
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	svc := ingest.New(cfg, slog.New(slog.DiscardHandler), servicePool, ring, catalogue, reg)
	testenv.Run(t, svc.Run)
	gin.SetMode(gin.ReleaseMode)
	engine := gin.New()
	engine.HandleMethodNotAllowed = true
	svc.Register(engine)
	srv := httptest.NewServer(engine)
	t.Cleanup(srv.Close) // before the commits stop: requests wait on them

	b := &bundle{pool: pool, store: tenancy.Store{Pool: pool, Ring: ring, Providers: cfg.Providers}, srv: srv, svc: svc, reg: reg,
		secret: "whsec_" + testenv.RandomSuffix()}
	b.tenantID = b.newTenant(t)
	b.sourceID = b.newSource(t, tenancy.NewSource{TenantID: b.tenantID, Kind: "stripe", Secret: b.secret})
	return b
}

func (b *bundle) newTenant(t *testing.T) string {
	t.Helper()
	id, err := b.store.CreateTenant(context.Background(), t.Name())
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// newSource creates a source; an empty account gets a random one.
func (b *bundle) newSource(t *testing.T, ns tenancy.NewSource) string {
	t.Helper()
	return b.newSourceIn(t, b.store, ns)
}

// newSourceIn is newSource through another store (another registry).
func (b *bundle) newSourceIn(t *testing.T, store tenancy.Store, ns tenancy.NewSource) string {
	t.Helper()
	if ns.Account == "" {
		ns.Account = "acct_" + testenv.RandomSuffix()
	}
	id, err := store.CreateSource(context.Background(), ns)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// post sends body to path with the given headers (Content-Type defaults to
// JSON) and returns the status and the answer's body.
func (b *bundle) post(t *testing.T, path string, body []byte, h http.Header) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, b.srv.URL+path, bytes.NewReader(body))
	for k, v := range h {
		req.Header[k] = v
	}
	if req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, answer
}

func stripeHeader(secret string, body []byte, at time.Time) http.Header {
	return http.Header{"Stripe-Signature": {webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: body, Secret: secret, Timestamp: at}).Header}}
}

func (b *bundle) send(t *testing.T, body []byte, mutate func(*http.Request)) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, b.srv.URL+"/v1/ingest/"+b.sourceID, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Stripe-Signature", stripeHeader(b.secret, body, time.Now()).Get("Stripe-Signature"))
	if mutate != nil {
		mutate(req)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func (b *bundle) count(t *testing.T, query string) int {
	t.Helper()
	return b.countFor(t, query, b.tenantID)
}

func (b *bundle) countFor(t *testing.T, query string, args ...any) int {
	t.Helper()
	var n int
	if err := b.pool.QueryRow(context.Background(), query, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func (b *bundle) inbox(t *testing.T) int {
	return b.count(t, `SELECT count(*) FROM inbox WHERE tenant_id = $1`)
}

func (b *bundle) outbox(t *testing.T) int {
	return b.count(t, `SELECT count(*) FROM outbox WHERE headers->>'ce_tenantid' = $1::text`)
}

// storedFor counts every row a tenant's deliveries can leave: inbox,
// conflicts, outbox, attempts and effects.
func (b *bundle) storedFor(t *testing.T, tenantID string) int {
	t.Helper()
	return b.countFor(t, `SELECT (SELECT count(*) FROM inbox WHERE tenant_id = $1)
	 + (SELECT count(*) FROM inbox_conflicts c JOIN inbox i ON i.id = c.inbox_id WHERE i.tenant_id = $1)
	 + (SELECT count(*) FROM outbox WHERE headers->>'ce_tenantid' = $1::text)
	 + (SELECT count(*) FROM delivery_log WHERE tenant_id = $1)
	 + (SELECT count(*) FROM credit_grants WHERE tenant_id = $1)`, tenantID)
}

func event(id, typ string, object string) []byte {
	return fmt.Appendf(nil, `{"id":%q,"type":%q,"created":%d,"data":{"object":%s}}`, id, typ, time.Now().Unix(), object)
}

func paid(id, invoice string) []byte {
	return event(id, "invoice.paid", fmt.Sprintf(`{"id":%q,"object":"invoice","customer":"cus_1","amount_paid":100,"status":"paid"}`, invoice))
}

func TestRequestsRefusedBeforeAuthenticationStoreNothing(t *testing.T) {
	t.Parallel()
	b := setup(t, ingest.Config{MaxBodyBytes: 4096})
	body := paid("evt_1", "in_1")
	cases := map[string]struct {
		body   []byte
		mutate func(*http.Request)
		want   int
	}{
		"unknown source": {body, func(r *http.Request) {
			r.URL.Path = "/v1/ingest/00000000-0000-0000-0000-000000000000"
		}, http.StatusNotFound},
		"source id not a uuid": {body, func(r *http.Request) { r.URL.Path = "/v1/ingest/nope" }, http.StatusNotFound},
		"form body":            {body, func(r *http.Request) { r.Header.Set("Content-Type", "application/x-www-form-urlencoded") }, http.StatusUnsupportedMediaType},
		"too large":            {bytes.Repeat([]byte("x"), 5000), nil, http.StatusRequestEntityTooLarge},
		"wrong method":         {body, func(r *http.Request) { r.Method = http.MethodPut }, http.StatusMethodNotAllowed},
		"wrong signature":      {body, func(r *http.Request) { r.Header.Set("Stripe-Signature", "t=1,v1=00") }, http.StatusUnauthorized},
	}
	for name, tc := range cases {
		if got := b.send(t, tc.body, tc.mutate); got != tc.want {
			t.Errorf("%s: status %d, want %d", name, got, tc.want)
		}
	}
	if n := b.inbox(t); n != 0 {
		t.Errorf("inbox rows = %d, want 0", n)
	}
}

func TestAuthenticatedButUnreadableBodyIsRefused(t *testing.T) {
	t.Parallel()
	b := setup(t, ingest.Config{})
	if got := b.send(t, []byte(`{"no":"id"}`), nil); got != http.StatusBadRequest {
		t.Fatalf("status %d, want 400", got)
	}
	if n := b.inbox(t); n != 0 {
		t.Errorf("inbox rows = %d, want 0", n)
	}
}

// Invariant 4: same event key, other content: the original stays and the
// newcomer is kept aside; a re-serialised copy is a duplicate.
func TestSameKeyDifferentContentIsKeptAsConflict(t *testing.T) {
	t.Parallel()
	b := setup(t, ingest.Config{})
	original := paid("evt_c", "in_c")
	if got := b.send(t, original, nil); got != http.StatusAccepted {
		t.Fatalf("original: status %d", got)
	}
	reserialised := []byte(strings.ReplaceAll(string(original), `,"`, `, "`))
	if got := b.send(t, reserialised, nil); got != http.StatusOK {
		t.Fatalf("re-serialised copy: status %d, want 200 (duplicate)", got)
	}
	if got := b.send(t, paid("evt_c", "in_other"), nil); got != http.StatusAccepted {
		t.Fatalf("conflicting copy: status %d, want 202 once kept", got)
	}
	if n := b.inbox(t); n != 1 {
		t.Fatalf("inbox rows = %d, want 1", n)
	}
	var stored []byte
	if err := b.pool.QueryRow(context.Background(), `SELECT p.body FROM inbox i JOIN inbox_payloads p ON p.inbox_id = i.id WHERE i.tenant_id = $1`, b.tenantID).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(stored, original) {
		t.Fatal("the original was overwritten")
	}
	if n := b.count(t, `SELECT count(*) FROM inbox_conflicts c JOIN inbox i ON i.id = c.inbox_id WHERE i.tenant_id = $1`); n != 1 {
		t.Fatalf("conflicts = %d, want 1", n)
	}
	if n := b.outbox(t); n != 1 {
		t.Fatalf("outbox rows = %d, want 1", n)
	}
}

func TestSchemaFailureIsQuarantinedAndUnknownTypeKeptUnpublished(t *testing.T) {
	t.Parallel()
	b := setup(t, ingest.Config{})
	bad := event("evt_q", "invoice.paid", `{"id":"in_q","object":"invoice","customer":"cus_1","amount_paid":"lots","status":"paid"}`)
	if got := b.send(t, bad, nil); got != http.StatusAccepted {
		t.Fatalf("quarantined: status %d, want 202", got)
	}
	if got := b.send(t, event("evt_u", "balance.available", `{"id":"bal","object":"balance"}`), nil); got != http.StatusAccepted {
		t.Fatalf("unhandled: status %d, want 202", got)
	}
	if n := b.count(t, `SELECT count(*) FROM inbox WHERE tenant_id = $1 AND status = 'quarantined' AND reason <> ''`); n != 1 {
		t.Fatalf("quarantined rows = %d, want 1", n)
	}
	if n := b.count(t, `SELECT count(*) FROM inbox WHERE tenant_id = $1 AND status = 'unhandled'`); n != 1 {
		t.Fatalf("unhandled rows = %d, want 1", n)
	}
	if n := b.outbox(t); n != 0 {
		t.Fatalf("outbox rows = %d, want 0: neither may be published", n)
	}
}

func TestLargeBodyTravelsByClaim(t *testing.T) {
	t.Parallel()
	b := setup(t, ingest.Config{MaxBodyBytes: 1 << 20})
	padding := strings.Repeat("x", envelope.MaxInlineBody)
	body := event("evt_big", "invoice.paid", fmt.Sprintf(`{"id":"in_big","object":"invoice","customer":"cus_1","amount_paid":1,"status":"paid","description":%q}`, padding))
	if got := b.send(t, body, nil); got != http.StatusAccepted {
		t.Fatalf("status %d", got)
	}
	if n := b.count(t, `SELECT count(*) FROM outbox WHERE headers->>'ce_tenantid' = $1::text AND payload IS NULL AND inbox_id IS NOT NULL`); n != 1 {
		t.Fatalf("claimed outbox rows = %d, want 1", n)
	}
}
