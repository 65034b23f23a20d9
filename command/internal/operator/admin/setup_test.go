package admin_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicehq/sluice/command/internal/effects/builtintest"
	"github.com/sluicehq/sluice/command/internal/operator/admin"
	"github.com/sluicehq/sluice/command/internal/operator/admintoken"
	"github.com/sluicehq/sluice/command/internal/operator/operate"
	"github.com/sluicehq/sluice/command/internal/operator/portallink"
	"github.com/sluicehq/sluice/command/internal/operator/testevent"
	"github.com/sluicehq/sluice/internal/envelope"
	"github.com/sluicehq/sluice/internal/ingest"
	"github.com/sluicehq/sluice/internal/ingest/reconcile"
	"github.com/sluicehq/sluice/internal/kafka"
	"github.com/sluicehq/sluice/internal/keyring"
	"github.com/sluicehq/sluice/internal/listen"
	"github.com/sluicehq/sluice/internal/pg"
	"github.com/sluicehq/sluice/internal/provider/kinds"
	"github.com/sluicehq/sluice/internal/provider/kinds/stripe/stripetest"
	"github.com/sluicehq/sluice/internal/store/catalog"
	"github.com/sluicehq/sluice/internal/store/endpoints"
	"github.com/sluicehq/sluice/internal/store/tenancy"
	"github.com/sluicehq/sluice/internal/testenv"
	"github.com/sluicehq/sluice/schemas"
)

var (
	dbURL string
	// adm and topics are the package's Kafka: the subscriptions group's
	// topic exists, so a rewind of that group is answered.
	adm    *kadm.Client
	topics envelope.Topics
)

func TestMain(m *testing.M) {
	services, err := testenv.Find()
	if err != nil {
		fmt.Fprintln(os.Stderr, "admin tests:", err)
		os.Exit(1)
	}
	db, err := services.NewDatabase(context.Background(), "admin")
	if err != nil {
		fmt.Fprintln(os.Stderr, "admin tests:", err)
		os.Exit(1)
	}
	dbURL = db.URL
	cl, err := kgo.NewClient(kgo.SeedBrokers(services.Brokers...))
	if err != nil {
		fmt.Fprintln(os.Stderr, "admin tests:", err)
		os.Exit(1)
	}
	adm = kadm.NewClient(cl)
	topics = envelope.Topics{Prefix: "adm" + testenv.RandomSuffix() + ".sluice"}
	if err := kafka.EnsureTopics(context.Background(), adm, kafka.TopicSpec{Partitions: 1}, topics.Resource("subscriptions")); err != nil {
		fmt.Fprintln(os.Stderr, "admin tests:", err)
		os.Exit(1)
	}
	code := m.Run()
	_ = kafka.DeleteTopicsWithPrefix(context.Background(), adm, topics.Resource(""))
	cl.Close()
	db.Drop()
	os.Exit(code)
}

// bundle is one in-process admin listener on the package's database, with
// a validator built from the document it serves.
type bundle struct {
	pool   *pgxpool.Pool
	store  tenancy.Store
	ends   endpoints.Store
	tokens admintoken.Store
	api    *admin.API
	srv    *httptest.Server
	routes []route

	once      sync.Once
	validator validator.Validator
	spec      map[string]any
}

type route struct{ method, path string }

func setup(t *testing.T, groups ...func(*admin.API)) *bundle {
	t.Helper()
	return setupWith(t, process{kafka: adm, ingests: true}, groups...)
}

// process is what the admin listener's process runs beside the API.
type process struct {
	// kafka is the operator's Kafka client; nil: the process runs no
	// stage reading Kafka.
	kafka *kadm.Client
	// ingests: the process ingests, so the API is given a reconciliation
	// runner (an ingest service of its own that recovered events enter).
	ingests bool
}

// setupWith is setup in a process that runs what p says.
func setupWith(t *testing.T, p process, groups ...func(*admin.API)) *bundle {
	t.Helper()
	ctx := context.Background()
	pool, err := pg.Connect(ctx, dbURL, 8)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	key, _ := keyring.Generate()
	ring, _ := keyring.Parse(key)
	store := tenancy.Store{Pool: pool, Ring: ring, Providers: kinds.Builtin()}
	srv := listen.NewAdmin("127.0.0.1:0", slog.New(slog.DiscardHandler), prometheus.NewRegistry(), nil)
	types, err := catalog.New(pool, catalog.Config{Topics: topics, Providers: kinds.Builtin()})
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	op := operate.New(pool, p.kafka, operate.Config{Topics: topics, Groups: builtintest.Options(t, topics), Trails: builtintest.Trails()})
	// Plain http is allowed: the tests' receivers are httptest servers.
	ends := endpoints.Store{Pool: pool, Ring: ring, Limits: endpoints.Limits{AllowHTTP: true}}
	groups = append([]func(*admin.API){admin.OperateRoutes(op, log), admin.CatalogRoutes(types), admin.DestinationRoutes(&ends, testSender{}, testevent.Builder{Pool: pool, Builtin: testCatalogue(t), Types: types}),
		admin.DeliveryRoutes(&ends, deliveryHorizon)}, groups...)
	cfg := admin.Config{Pool: pool, Store: store, Groups: groups}
	if p.ingests {
		cfg.Reconciler = reconciler(t, store, log)
	}
	api := admin.New(srv.Engine, cfg, log)
	b := &bundle{pool: pool, store: store, ends: ends, tokens: admintoken.Store{Pool: pool}, api: api}
	for _, r := range srv.Engine.Routes() {
		b.routes = append(b.routes, route{r.Method, r.Path})
	}
	b.srv = httptest.NewServer(srv.Engine)
	t.Cleanup(b.srv.Close)
	return b
}

// reconciler is the runner of an ingesting process, as the pipeline
// builds the admin API's: its runs enter through an ingest service.
func reconciler(t *testing.T, store tenancy.Store, log *slog.Logger) *reconcile.Runner {
	t.Helper()
	catalogue, err := schemas.Load()
	if err != nil {
		t.Fatal(err)
	}
	svc := ingest.New(ingest.Config{Topics: topics, Providers: kinds.Builtin()}, log, store.Pool, store.Ring, catalogue, prometheus.NewRegistry())
	testenv.Run(t, svc.Run)
	return reconcile.New(reconcile.Config{RunTimeout: admin.ReconcileRunTimeout}, log, store, kinds.Builtin(), svc, reconcile.NewMetrics(prometheus.NewRegistry()))
}

// load fetches the served document once and builds the validator every
// response is checked with.
func (b *bundle) load(t *testing.T) {
	t.Helper()
	b.once.Do(func() {
		resp, err := http.Get(b.srv.URL + admin.OpenAPIPath)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d", admin.OpenAPIPath, resp.StatusCode)
		}
		if err := json.Unmarshal(raw, &b.spec); err != nil {
			t.Fatal(err)
		}
		if v, _ := b.spec["openapi"].(string); v != "3.1.0" {
			t.Fatalf("served document is OpenAPI %q, want 3.1.0", v)
		}
		doc, err := libopenapi.NewDocument(raw)
		if err != nil {
			t.Fatal(err)
		}
		v, errs := validator.NewValidator(doc)
		if len(errs) > 0 {
			t.Fatalf("validator: %v", errs)
		}
		if ok, verrs := v.ValidateDocument(); !ok {
			for _, e := range verrs {
				t.Errorf("served document invalid: %s: %s", e.Message, e.Reason)
			}
			t.FailNow()
		}
		b.validator = v
	})
	if b.validator == nil {
		t.Fatal("no validator")
	}
}

// do sends one request and checks the answer against the served OpenAPI
// document: status, content type and body schema.
func (b *bundle) do(t *testing.T, token, method, path string, body any) (int, []byte) {
	t.Helper()
	status, got, _ := b.doAt(t, b.srv.URL, token, method, path, body)
	return status, got
}

// doAt is do against another server of the same API, with headers of
// its own, returning the answer's headers too.
func (b *bundle) doAt(t *testing.T, base, token, method, path string, body any, headers ...map[string]string) (int, []byte, http.Header) {
	t.Helper()
	b.load(t)
	var rd io.Reader
	var raw []byte
	if body != nil {
		switch v := body.(type) {
		case string:
			raw = []byte(v)
		default:
			raw, _ = json.Marshal(v)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for _, h := range headers {
		for k, v := range h {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	// The validator reads the request and response again.
	vreq, _ := http.NewRequest(method, base+path, bytes.NewReader(raw))
	vreq.Header = req.Header.Clone()
	resp.Body = io.NopCloser(bytes.NewReader(got))
	if ok, verrs := b.validator.ValidateHttpResponse(vreq, resp); !ok {
		for _, e := range verrs {
			t.Errorf("%s %s -> %d does not match the OpenAPI document: %s: %s (body %s)", method, path, resp.StatusCode, e.Message, e.Reason, got)
		}
	}
	if resp.StatusCode >= 400 && !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/problem+json") {
		t.Errorf("%s %s -> %d with content type %q, want a problem detail", method, path, resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if bytes.Contains(got, []byte("SQLSTATE")) {
		t.Errorf("%s %s -> %d leaks the database's text: %s", method, path, resp.StatusCode, got)
	}
	return resp.StatusCode, got, resp.Header
}

func (b *bundle) token(t *testing.T, role admintoken.Role, tenantID string) string {
	t.Helper()
	_, tok, err := b.tokens.Create(context.Background(), admintoken.New{Role: role, TenantID: tenantID, Name: t.Name()})
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func (b *bundle) newTenant(t *testing.T) string {
	t.Helper()
	id, err := b.store.CreateTenant(context.Background(), "t-"+testenv.RandomSuffix())
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// testCatalogue is Sluice's own event types.
func testCatalogue(t testing.TB) *schemas.Catalogue {
	t.Helper()
	c, err := schemas.Load()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// testSender answers the test route as a deliverer whose endpoint took
// the test event would.
type testSender struct{}

func (testSender) TestEndpoint(context.Context, string, endpoints.TestEvent) (endpoints.Attempt, error) {
	return endpoints.Attempt{Attempt: 1, At: time.Now(), Status: http.StatusNoContent, LatencyMS: 1}, nil
}

// world is a tenant with one of everything.
type world struct {
	tenant, source, workspace, apiKey string
	// endpoint is the tenant's endpoint, doomed another the route walk
	// deletes (the walk's other routes still find the first).
	endpoint, doomed string
	// apiSource is a Stripe source with API credentials, whose API is
	// stripe, a fake: reconciliation's routes aim at it.
	apiSource string
	stripe    *stripetest.API
	// An event (inbox id) with a conflict, two dead letters of the
	// subscriptions group (one replayed alone, one by the filtered replay:
	// reason walk-set) and an event type, api.walk.created.
	inboxID, deadLetter, setLetter, conflict string
	// adminToken is an unscoped read token's id.
	adminToken string
	// A dead delivery of the event to endpoint (seedDelivery).
	delivery string
	// portalLink is an unused portal link of the tenant.
	portalLink string
}

// Fixtures of the operate and catalog routes.
const (
	walkKind, walkType = "api", "walk.created"
	walkSetReason      = "walk-set"
)

func (b *bundle) newWorld(t *testing.T) world {
	t.Helper()
	ctx := context.Background()
	w := world{tenant: b.newTenant(t)}
	var err error
	if w.source, err = b.store.CreateSource(ctx, tenancy.NewSource{TenantID: w.tenant, Kind: "standard_webhooks",
		Account: "acct_" + testenv.RandomSuffix(), Secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}); err != nil {
		t.Fatal(err)
	}
	if w.workspace, err = b.store.CreateWorkspace(ctx, w.tenant, "cus_"+testenv.RandomSuffix(), "w"); err != nil {
		t.Fatal(err)
	}
	if w.apiKey, _, err = b.store.CreateAPIKey(ctx, w.tenant); err != nil {
		t.Fatal(err)
	}
	w.apiSource, w.stripe = b.newStripeSource(t, w.tenant)
	for _, id := range []*string{&w.endpoint, &w.doomed} {
		e, _, err := b.ends.CreateEndpoint(ctx, endpoints.New{TenantID: w.tenant, URL: "https://receiver.example/world", Filters: []string{"*"}})
		if err != nil {
			t.Fatal(err)
		}
		*id = e.ID
	}
	tok, _, err := b.tokens.Create(ctx, admintoken.New{Role: admintoken.RoleRead, Name: "world"})
	if err != nil {
		t.Fatal(err)
	}
	w.adminToken = tok.ID
	link, _, err := portallink.Store{Pool: b.pool}.Mint(ctx, portallink.New{TenantID: w.tenant, Scope: admintoken.PortalDestinations, Access: portallink.AccessRead})
	if err != nil {
		t.Fatal(err)
	}
	w.portalLink = link.ID
	b.seedOperations(t, &w)
	b.seedDelivery(t, &w)
	return w
}

// newStripeSource is a Stripe source of tenant with API credentials for a
// fake Stripe API.
func (b *bundle) newStripeSource(t *testing.T, tenant string) (string, *stripetest.API) {
	t.Helper()
	ctx := context.Background()
	id, err := b.store.CreateSource(ctx, tenancy.NewSource{TenantID: tenant, Kind: "stripe", Account: "acct_" + testenv.RandomSuffix(),
		Secret: "whsec_" + testenv.RandomSuffix()})
	if err != nil {
		t.Fatal(err)
	}
	api := stripetest.New(t)
	if err := b.store.SetAPICredentials(ctx, id, fmt.Appendf(nil, `{"secret_key":"rk_test_x","api_base":%q}`, api.URL)); err != nil {
		t.Fatal(err)
	}
	return id, api
}

func (b *bundle) count(t *testing.T, query string, args ...any) int {
	t.Helper()
	var n int
	if err := b.pool.QueryRow(context.Background(), query, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func decode[T any](t *testing.T, raw []byte) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
	return v
}

// seedOperations writes, as ingest and the consumers would, an event, a
// conflicting delivery of it, two dead letters and an event type.
func (b *bundle) seedOperations(t *testing.T, w *world) {
	t.Helper()
	ctx := context.Background()
	eventID, sub := "evt_"+testenv.RandomSuffix(), "sub_"+testenv.RandomSuffix()
	now := time.Now().UTC().Truncate(time.Microsecond)
	var inboxID int64
	err := b.pool.QueryRow(ctx, `
		WITH i AS (
			INSERT INTO inbox (tenant_id, source_id, source_account, event_id, event_type, object_type, object_id,
			                   received_at, status, body_sha256)
			SELECT $1, $2, s.account, $3, 'stripe.customer.subscription.updated', 'subscription', $4, $5, 'published', '\x00'
			FROM sources s WHERE s.id = $2
			RETURNING id, received_at
		), p AS (
			INSERT INTO inbox_payloads (inbox_id, received_at, body) SELECT id, received_at, $6 FROM i
		)
		SELECT id FROM i`, w.tenant, w.source, eventID, sub, now, []byte(`{"id":"`+eventID+`"}`)).Scan(&inboxID)
	if err != nil {
		t.Fatal(err)
	}
	w.inboxID = strconv.FormatInt(inboxID, 10)
	conflictAt := now.Add(time.Second)
	if _, err := b.pool.Exec(ctx, `INSERT INTO inbox_conflicts (inbox_id, received_at, body_sha256, body) VALUES ($1, $2, '\x01', 'newcomer')`,
		inboxID, conflictAt); err != nil {
		t.Fatal(err)
	}
	w.conflict = operate.ConflictID(inboxID, conflictAt)
	w.deadLetter = b.seedDeadLetter(t, *w, eventID, inboxID, sub, "subscription has no status")
	w.setLetter = b.seedDeadLetter(t, *w, eventID, inboxID, sub, walkSetReason)
	if _, err := b.types(t).Create(ctx, catalog.Spec{TenantID: w.tenant, Kind: walkKind, Type: walkType, Schema: []byte(`{"type":"object"}`),
		ResourceType: "order"}); err != nil {
		t.Fatal(err)
	}
}

func (b *bundle) types(t *testing.T) *catalog.Store {
	t.Helper()
	s, err := catalog.New(b.pool, catalog.Config{Topics: topics, Providers: kinds.Builtin()})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// seedDeadLetter writes a dead letter of the subscriptions group whose
// replay projects subscription sub.
func (b *bundle) seedDeadLetter(t *testing.T, w world, eventID string, inboxID int64, sub, reason string) string {
	t.Helper()
	ev := envelope.Event{ID: eventID, Source: envelope.SourceURI(w.tenant, w.source), Type: "stripe.customer.subscription.updated",
		TenantID: w.tenant, SourceAccount: "acct_x", PartitionKey: "k", InboxID: strconv.FormatInt(inboxID, 10)}
	body := fmt.Sprintf(`{"created":%d,"data":{"object":{"id":%q,"customer":"cus_1","status":"active"}}}`, time.Now().Unix(), sub)
	var id int64
	err := b.pool.QueryRow(context.Background(), `
		INSERT INTO dead_letters (consumer_group, topic, partition, "offset", key, headers, payload, reason, attempts,
		                          first_failed_at, last_failed_at)
		VALUES ($1, $2, 0, nextval('inbox_id_seq'), 'k', $3, $4, $5, 3, now(), now())
		RETURNING id`, topics.Resource("subscriptions"), topics.Resource("subscriptions"), ev.Headers(), []byte(body), reason).Scan(&id)
	if err != nil {
		t.Fatal(err)
	}
	return strconv.FormatInt(id, 10)
}
