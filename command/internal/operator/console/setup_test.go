package console_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/sluicehq/sluice/command/internal/effects/builtintest"
	"github.com/sluicehq/sluice/command/internal/operator/admin"
	"github.com/sluicehq/sluice/command/internal/operator/admintoken"
	"github.com/sluicehq/sluice/command/internal/operator/console"
	"github.com/sluicehq/sluice/command/internal/operator/operate"
	"github.com/sluicehq/sluice/command/internal/operator/testevent"
	"github.com/sluicehq/sluice/internal/envelope"
	"github.com/sluicehq/sluice/internal/ingest"
	"github.com/sluicehq/sluice/internal/ingest/reconcile"
	"github.com/sluicehq/sluice/internal/keyring"
	"github.com/sluicehq/sluice/internal/listen"
	"github.com/sluicehq/sluice/internal/pg"
	"github.com/sluicehq/sluice/internal/provider/kinds"
	"github.com/sluicehq/sluice/internal/store/catalog"
	"github.com/sluicehq/sluice/internal/store/endpoints"
	"github.com/sluicehq/sluice/internal/store/tenancy"
	"github.com/sluicehq/sluice/internal/testenv"
	"github.com/sluicehq/sluice/schemas"
)

var dbURL string

func TestMain(m *testing.M) { os.Exit(testenv.RunWithDatabase(m, "console", &dbURL)) }

// bundle is one admin listener with the console on it, on the package's
// database.
type bundle struct {
	pool  *pgxpool.Pool
	store tenancy.Store
	ends  *endpoints.Store
	srv   *httptest.Server
	// api records every answer the API gave the console.
	api *recordingAPI
	// op is the API's operator (a test samples the lag through it).
	op *operate.Operator
}

// recordingAPI is the admin API as the console calls it, keeping every
// answer, so a test can look at what the pages fetched.
type recordingAPI struct {
	h       http.Handler
	mu      sync.Mutex
	answers []string
}

func (a *recordingAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var sent []byte
	if r.Body != nil {
		sent, _ = io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(sent))
	}
	rec := httptest.NewRecorder()
	a.h.ServeHTTP(rec, r)
	a.mu.Lock()
	a.answers = append(a.answers, r.Method+" "+r.URL.String()+" "+string(sent)+" -> "+strconv.Itoa(rec.Code)+" "+rec.Body.String())
	a.mu.Unlock()
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	_, _ = w.Write(rec.Body.Bytes())
}

func (a *recordingAPI) take() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := a.answers
	a.answers = nil
	return out
}

// testSender answers the endpoint test route as a deliverer whose
// endpoint took the test event would.
type testSender struct{}

func (testSender) TestEndpoint(_ context.Context, _ string, ev endpoints.TestEvent) (endpoints.Attempt, error) {
	if ev.Type == "" {
		ev.Type = endpoints.SyntheticTestType
	}
	return endpoints.Attempt{Attempt: 1, At: time.Now(), Status: http.StatusAccepted, LatencyMS: 7, Answer: `{"received":"` + ev.Type + `"}`}, nil
}

// groupsFunc adds resource groups to the API (the operate routes are
// always there).
func setup(t testing.TB, extra ...func(*admin.API)) *bundle {
	t.Helper()
	return setupWith(t, nil, envelope.Topics{}, extra...)
}

// setupWith is setup with a Kafka client (nil: none) for the operator.
func setupWith(t testing.TB, adm *kadm.Client, topics envelope.Topics, extra ...func(*admin.API)) *bundle {
	t.Helper()
	return setupProcess(t, process{kafka: adm, topics: topics}, extra...)
}

// process is what the admin listener's process runs beside the API.
type process struct {
	// kafka is the operator's Kafka client; nil: none.
	kafka  *kadm.Client
	topics envelope.Topics
	// slot is the relay's slot the operator reads ("": the default).
	slot string
	// metrics is the registry the operator samples ingest's answers from.
	metrics prometheus.Gatherer
	// ingests: the process ingests, so the API is given a reconciliation
	// runner (an ingest service of its own that recovered events enter).
	ingests bool
	// health is what the process's checks say of its stages (nil: none
	// given to the console).
	health func(context.Context) []console.StageHealth
	// refresh is how often the overview refreshes (0: the default).
	refresh time.Duration
}

// setupProcess is setup in a process that runs what p says.
func setupProcess(t testing.TB, p process, extra ...func(*admin.API)) *bundle {
	t.Helper()
	adm, topics := p.kafka, p.topics
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
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	op := operate.New(pool, adm, operate.Config{Topics: topics, Slot: p.slot, Metrics: p.metrics, Groups: builtintest.Options(t, topics), Trails: builtintest.Trails()})
	types, err := catalog.New(pool, catalog.Config{Providers: kinds.Builtin()})
	if err != nil {
		t.Fatal(err)
	}
	ends := &endpoints.Store{Pool: pool, Ring: ring, Limits: endpoints.Limits{AllowHTTP: true}}
	groups := append([]func(*admin.API){admin.OperateRoutes(op, log), admin.CatalogRoutes(types), admin.DestinationRoutes(ends, testSender{}, testevent.Builder{Pool: pool, Builtin: catalogue(t), Types: types}),
		admin.DeliveryRoutes(ends, 48*time.Hour)}, extra...)
	cfg := admin.Config{Pool: pool, Store: store, Groups: groups}
	if p.ingests {
		cfg.Reconciler = reconciler(t, store, topics, log)
	}
	admin.New(srv.Engine, cfg, log)
	api := &recordingAPI{h: srv.Engine}
	if _, err := console.Register(srv.Engine, console.Config{Pool: pool, API: api, Health: p.health, Refresh: p.refresh}, log); err != nil {
		t.Fatal(err)
	}
	b := &bundle{pool: pool, store: store, ends: ends, api: api, op: op, srv: httptest.NewServer(srv.Engine)}
	t.Cleanup(b.srv.Close)
	return b
}

// catalogue is Sluice's own event types.
func catalogue(t testing.TB) *schemas.Catalogue {
	t.Helper()
	c, err := schemas.Load()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// reconciler is the runner of an ingesting process, as the pipeline
// builds the admin API's: its runs enter through an ingest service.
func reconciler(t testing.TB, store tenancy.Store, topics envelope.Topics, log *slog.Logger) *reconcile.Runner {
	t.Helper()
	catalogue, err := schemas.Load()
	if err != nil {
		t.Fatal(err)
	}
	// Ingest and its reconciler on a pool of their own, as in a process
	// (the admin listener's is another): sharing the console's eight
	// connections, a run holding its source's lock and ingest's committers
	// could wait on each other for a connection under load.
	pool, err := pg.Connect(context.Background(), dbURL, 8)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	store.Pool = pool
	svc := ingest.New(ingest.Config{Topics: topics, Providers: kinds.Builtin()}, log, store.Pool, store.Ring, catalogue, prometheus.NewRegistry())
	testenv.Run(t, svc.Run)
	return reconcile.New(reconcile.Config{RunTimeout: admin.ReconcileRunTimeout}, log, store, kinds.Builtin(), svc, reconcile.NewMetrics(prometheus.NewRegistry()))
}

// token makes an admin token.
func (b *bundle) token(t testing.TB, role admintoken.Role, tenant string) (admintoken.Token, string) {
	t.Helper()
	rec, secret, err := admintoken.Store{Pool: b.pool}.Create(t.Context(), admintoken.New{Name: t.Name(), Role: role, TenantID: tenant})
	if err != nil {
		t.Fatal(err)
	}
	return rec, secret
}

// client is a browser-less client of the console: a cookie jar, no
// redirects followed (tests look at them).
func (b *bundle) client(t testing.TB) *http.Client {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// signIn signs c in with token and returns the session's cookie value.
func (b *bundle) signIn(t testing.TB, c *http.Client, token string) string {
	t.Helper()
	resp, err := c.PostForm(b.srv.URL+console.Prefix+"/sign-in", url.Values{"token": {token}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != console.Prefix+"/" {
		t.Fatalf("sign-in: %d to %q, want 303 to the overview", resp.StatusCode, resp.Header.Get("Location"))
	}
	for _, ck := range resp.Cookies() {
		if ck.Name == console.CookieName {
			return ck.Value
		}
	}
	t.Fatal("sign-in set no session cookie")
	return ""
}

// browser is a fresh headless Chromium (Debian's), driven by chromedp,
// with the extra options given. A missing Chromium fails the test:
// dev/console/chromium.sh installs it.
func browser(t testing.TB, extra ...chromedp.ExecAllocatorOption) context.Context {
	t.Helper()
	const path = "/usr/bin/chromium"
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("no Chromium at %s (run dev/console/chromium.sh): %v", path, err)
	}
	// A profile of its own, removed after the browser is gone (its
	// helpers may still be writing to it as it exits: best effort).
	profile, err := os.MkdirTemp("", "console-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path), chromedp.UserDataDir(profile),
		chromedp.Flag("headless", true), chromedp.Flag("no-sandbox", true), chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true), chromedp.Flag("no-first-run", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
	}
	opts = append(opts, extra...)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	// Generous: the page walk tabs through every page on a loaded machine.
	ctx, cancelTimeout := context.WithTimeout(ctx, 3*time.Minute)
	t.Cleanup(func() { cancelTimeout(); cancel(); cancelAlloc(); _ = os.RemoveAll(profile) })
	if err := chromedp.Run(ctx); err != nil {
		t.Fatalf("start Chromium: %v", err)
	}
	return ctx
}

// browserSignIn signs the browser in with token through the sign-in form.
func (b *bundle) browserSignIn(t testing.TB, ctx context.Context, token string) {
	t.Helper()
	var h1 string
	err := chromedp.Run(ctx,
		chromedp.Navigate(b.srv.URL+console.Prefix+"/"),
		chromedp.WaitVisible(`#token`, chromedp.ByID),
		chromedp.SendKeys(`#token`, token, chromedp.ByID),
		chromedp.Submit(`#token`, chromedp.ByID),
		chromedp.WaitVisible(`nav[aria-label="Pages"]`),
		chromedp.Text(`h1`, &h1),
	)
	if err != nil {
		var loc, body string
		_ = chromedp.Run(context.WithoutCancel(ctx), chromedp.Location(&loc), chromedp.OuterHTML("html", &body))
		t.Fatalf("sign in: %v (at %s: %.2000s)", err, loc, body)
	}
	if h1 != "Overview" {
		t.Fatalf("after sign-in the page is %q, want Overview", h1)
	}
}

// html is the page's whole document.
func html(t *testing.T, ctx context.Context) string {
	t.Helper()
	var s string
	if err := chromedp.Run(ctx, chromedp.OuterHTML(`html`, &s)); err != nil {
		t.Fatal(err)
	}
	return s
}

func contains(t *testing.T, what, s string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(s, w) {
			t.Errorf("%s lacks %q", what, w)
		}
	}
}
