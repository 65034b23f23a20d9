package endpoints_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sluicehq/sluice/internal/audit"
	"github.com/sluicehq/sluice/internal/keyring"
	"github.com/sluicehq/sluice/internal/pg"
	"github.com/sluicehq/sluice/internal/refusal"
	"github.com/sluicehq/sluice/internal/standardwebhooks"
	"github.com/sluicehq/sluice/internal/store/endpoints"
	"github.com/sluicehq/sluice/internal/testenv"
)

// pool is the package's database: tests isolate themselves by tenant.
var pool *pgxpool.Pool

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	services, err := testenv.Find()
	if err != nil {
		fmt.Fprintln(os.Stderr, "endpoints tests:", err)
		return 1
	}
	db, err := services.NewDatabase(context.Background(), "endpoints")
	if err != nil {
		fmt.Fprintln(os.Stderr, "endpoints tests:", err)
		return 1
	}
	defer db.Drop()
	if pool, err = pg.Connect(context.Background(), db.URL, 16); err != nil {
		fmt.Fprintln(os.Stderr, "endpoints tests:", err)
		return 1
	}
	defer pool.Close()
	return m.Run()
}

// ring seals every test's endpoints: Targets reads them all.
var ring = func() *keyring.Ring {
	key, err := keyring.Generate()
	if err != nil {
		panic(err)
	}
	r, err := keyring.Parse(key)
	if err != nil {
		panic(err)
	}
	return r
}()

// newStore is a store auditing as the CLI.
func newStore(t *testing.T, limits endpoints.Limits) endpoints.Store {
	t.Helper()
	return endpoints.Store{Pool: pool, Ring: ring, Limits: limits, Actor: &audit.Actor{}}
}

func newTenant(t *testing.T) string {
	t.Helper()
	var id string
	if err := pool.QueryRow(context.Background(), `INSERT INTO tenants (name) VALUES ($1) RETURNING id::text`, t.Name()).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

func create(t *testing.T, s endpoints.Store, n endpoints.New) (endpoints.Endpoint, string) {
	t.Helper()
	if n.URL == "" {
		n.URL = "https://receiver.example/hooks"
	}
	if n.Filters == nil {
		n.Filters = []string{"*"}
	}
	e, secret, err := s.CreateEndpoint(context.Background(), n)
	if err != nil {
		t.Fatal(err)
	}
	return e, secret
}

// target is endpoint id as the deliverer reads it; ok false when it is
// not among the targets (disabled, deleted). Only id is read: other
// tests' endpoints in the shared database are none of this one's.
func target(t *testing.T, s endpoints.Store, id string) (endpoints.Target, bool) {
	t.Helper()
	tg, ok, err := s.Target(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return tg, ok
}

func key(t *testing.T, secret string) string {
	t.Helper()
	k, err := standardwebhooks.Key(secret)
	if err != nil {
		t.Fatalf("secret %q is no Standard Webhooks secret: %v", secret, err)
	}
	return string(k)
}

func auditActions(t *testing.T, id string) []string {
	t.Helper()
	rows, err := pool.Query(context.Background(), `SELECT action FROM admin_audit WHERE resource = 'endpoint' AND target_id = $1 AND outcome = 'ok' ORDER BY id`, id)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var actions []string
	for rows.Next() {
		var a string
		if err := rows.Scan(&a); err != nil {
			t.Fatal(err)
		}
		actions = append(actions, a)
	}
	return actions
}

func TestCreatedEndpointShowsItsSecretOnceAndHeaderNamesOnly(t *testing.T) {
	t.Parallel()
	s := newStore(t, endpoints.Limits{})
	tenant := newTenant(t)
	e, secret := create(t, s, endpoints.New{TenantID: tenant, Description: "billing", Filters: []string{"stripe.invoice.*", "*", "stripe.invoice.*"},
		Rate: 10, Headers: map[string]string{"authorization": "Bearer hunter2", "X-Team": "billing"}})
	if !strings.HasPrefix(secret, "whsec_") {
		t.Fatalf("secret %q: want whsec_...", secret)
	}
	if strings.Join(e.Filters, ",") != "stripe.invoice.*,*" {
		t.Errorf("filters %v: want the repeat removed, order kept", e.Filters)
	}
	if !e.Ordered || !e.Enabled || e.RatePerSecond == nil || *e.RatePerSecond != 10 || e.Concurrency != nil || e.ActiveSecrets != 1 {
		t.Errorf("endpoint %+v: want ordered, enabled, rate 10, default concurrency, one secret", e)
	}
	if strings.Join(e.Headers, ",") != "Authorization,X-Team" {
		t.Errorf("header names %v: want Authorization,X-Team", e.Headers)
	}
	got, err := s.GetEndpoint(context.Background(), e.ID)
	if err != nil {
		t.Fatal(err)
	}
	if shown := fmt.Sprintf("%+v", got); strings.Contains(shown, "hunter2") || strings.Contains(shown, secret[6:]) {
		t.Errorf("the view shows a secret or a header value: %s", shown)
	}
	tg, ok := target(t, s, e.ID)
	if !ok {
		t.Fatal("the new endpoint is no target")
	}
	if len(tg.Keys) != 1 || string(tg.Keys[0]) != key(t, secret) {
		t.Errorf("target keys %d: want the one secret returned", len(tg.Keys))
	}
	if tg.Headers["Authorization"] != "Bearer hunter2" || tg.Headers["X-Team"] != "billing" || tg.Rate != 10 || !tg.Ordered {
		t.Errorf("target %+v: want the sealed headers opened, rate 10, ordered", tg)
	}
	var sealed []byte
	if err := pool.QueryRow(context.Background(), `SELECT headers_sealed FROM endpoints WHERE id = $1`, e.ID).Scan(&sealed); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(sealed), "hunter2") {
		t.Error("headers are stored in the clear")
	}
	if a := auditActions(t, e.ID); strings.Join(a, ",") != "endpoint.create" {
		t.Errorf("audit %v: want endpoint.create", a)
	}
}

func TestEndpointOutsideTheRulesIsRefused(t *testing.T) {
	t.Parallel()
	s := newStore(t, endpoints.Limits{MaxRate: 50, MaxConcurrency: 5})
	s.CheckURL = func(raw string) error {
		if strings.Contains(raw, "10.0.0.1") {
			return errors.New("10.0.0.1 is a private address")
		}
		return nil
	}
	tenant := newTenant(t)
	long := "https://receiver.example/" + strings.Repeat("a", endpoints.MaxURLLength)
	manyHeaders := map[string]string{}
	for i := range endpoints.MaxHeaders + 1 {
		manyHeaders[fmt.Sprintf("X-H%d", i)] = "v"
	}
	for _, c := range []struct {
		name, field string
		n           endpoints.New
	}{
		{"plain http", "url", endpoints.New{URL: "http://receiver.example/"}},
		{"relative", "url", endpoints.New{URL: "/hooks"}},
		{"no host", "url", endpoints.New{URL: "https:///hooks"}},
		{"user info", "url", endpoints.New{URL: "https://u:p@receiver.example/"}},
		{"fragment", "url", endpoints.New{URL: "https://receiver.example/#x"}},
		{"other scheme", "url", endpoints.New{URL: "ftp://receiver.example/"}},
		{"too long", "url", endpoints.New{URL: long}},
		{"policy", "url", endpoints.New{URL: "https://10.0.0.1/"}},
		{"rate over the cap", "rate_per_second", endpoints.New{Rate: 51}},
		{"concurrency over the cap", "concurrency", endpoints.New{Concurrency: 6}},
		{"no filter", "filters", endpoints.New{Filters: []string{}}},
		{"bad filter", "filters", endpoints.New{Filters: []string{"Stripe.*"}}},
		{"description", "description", endpoints.New{Description: strings.Repeat("d", endpoints.MaxDescriptionLength+1)}},
		{"reserved header", "headers", endpoints.New{Headers: map[string]string{"Webhook-Signature": "v1,x"}}},
		{"reserved ce header", "headers", endpoints.New{Headers: map[string]string{"ce-id": "x"}}},
		{"content-type", "headers", endpoints.New{Headers: map[string]string{"Content-Type": "text/plain"}}},
		{"header name", "headers", endpoints.New{Headers: map[string]string{"X Bad": "v"}}},
		{"header value", "headers", endpoints.New{Headers: map[string]string{"X-Ok": "secret-value\r\nX-Evil: 1"}}},
		{"too many headers", "headers", endpoints.New{Headers: manyHeaders}},
		{"headers too large", "headers", endpoints.New{Headers: map[string]string{"X-Big": strings.Repeat("v", endpoints.MaxHeaderBytes)}}},
		{"same header twice", "headers", endpoints.New{Headers: map[string]string{"x-a": "1", "X-A": "2"}}},
	} {
		n := c.n
		n.TenantID = tenant
		if n.URL == "" {
			n.URL = "https://receiver.example/hooks"
		}
		if n.Filters == nil {
			n.Filters = []string{"*"}
		}
		_, _, err := s.CreateEndpoint(context.Background(), n)
		ie, _ := refusal.Of(err)
		if ie == nil || ie.Field != c.field || !errors.Is(err, refusal.ErrInvalid) {
			t.Errorf("%s: %v, want invalid %s", c.name, err, c.field)
			continue
		}
		if strings.Contains(err.Error(), "secret-value") {
			t.Errorf("%s: the refusal repeats a header's value: %v", c.name, err)
		}
	}
	if n := count(t, `SELECT count(*) FROM endpoints WHERE tenant_id = $1`, tenant); n != 0 {
		t.Errorf("%d endpoints stored by refused creates", n)
	}
	s.Limits.AllowHTTP = true
	create(t, s, endpoints.New{TenantID: tenant, URL: "http://receiver.example/", Rate: 50, Concurrency: 5,
		Headers: map[string]string{"Authorization": "Basic eA=="}})
	if _, _, err := s.CreateEndpoint(context.Background(), endpoints.New{TenantID: "00000000-0000-4000-8000-000000000000",
		URL: "https://receiver.example/", Filters: []string{"*"}}); !errors.Is(err, refusal.ErrNotFound) {
		t.Errorf("unknown tenant: %v, want not found", err)
	}
}

func count(t *testing.T, query string, args ...any) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(context.Background(), query, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestTenantEndpointLimitHoldsUnderConcurrentCreates(t *testing.T) {
	t.Parallel()
	const max, tries = 3, 12
	s := newStore(t, endpoints.Limits{MaxPerTenant: max})
	tenant := newTenant(t)
	var (
		wg              sync.WaitGroup
		mu              sync.Mutex
		made, conflicts int
	)
	start := make(chan struct{})
	for range tries {
		wg.Go(func() {
			<-start
			_, _, err := s.CreateEndpoint(context.Background(), endpoints.New{TenantID: tenant, URL: "https://receiver.example/", Filters: []string{"*"}})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				made++
			case errors.Is(err, refusal.ErrConflict):
				conflicts++
			default:
				t.Error(err)
			}
		})
	}
	close(start)
	wg.Wait()
	if made != max || conflicts != tries-max {
		t.Errorf("%d made, %d refused: want %d and %d", made, conflicts, max, tries-max)
	}
	if n := count(t, `SELECT count(*) FROM endpoints WHERE tenant_id = $1`, tenant); n != max {
		t.Errorf("%d endpoints stored, want %d", n, max)
	}
}

func TestRotationSignsWithEveryUnexpiredSecret(t *testing.T) {
	t.Parallel()
	s := newStore(t, endpoints.Limits{})
	ctx := context.Background()
	e, first := create(t, s, endpoints.New{TenantID: newTenant(t)})
	second, expires, err := s.RotateSecret(ctx, e.ID, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if second == first || !strings.HasPrefix(second, "whsec_") {
		t.Fatalf("rotated secret %q: want a new whsec_ secret", second)
	}
	if until := time.Until(expires); until < 59*time.Minute || until > 61*time.Minute {
		t.Errorf("old secrets expire in %s, want the hour of overlap", until)
	}
	tg, _ := target(t, s, e.ID)
	if len(tg.Keys) != 2 || string(tg.Keys[0]) != key(t, second) || string(tg.Keys[1]) != key(t, first) {
		t.Fatalf("during the overlap: %d keys, want the new one then the old one", len(tg.Keys))
	}
	third, _, err := s.RotateSecret(ctx, e.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	tg, _ = target(t, s, e.ID)
	if len(tg.Keys) != 1 || string(tg.Keys[0]) != key(t, third) {
		t.Errorf("after a rotation without overlap: %d keys, want the newest alone", len(tg.Keys))
	}
	if got, _ := s.GetEndpoint(ctx, e.ID); got.ActiveSecrets != 1 {
		t.Errorf("%d active secrets, want 1", got.ActiveSecrets)
	}
	if _, _, err := s.RotateSecret(ctx, e.ID, endpoints.MaxOverlap+time.Second); !errors.Is(err, refusal.ErrInvalid) {
		t.Errorf("overlap past the bound: %v, want invalid", err)
	}
	if _, _, err := s.RotateSecret(ctx, "00000000-0000-4000-8000-000000000000", 0); !errors.Is(err, refusal.ErrNotFound) {
		t.Errorf("unknown endpoint: %v, want not found", err)
	}
	if a := auditActions(t, e.ID); strings.Join(a, ",") != "endpoint.create,endpoint.rotate_secret,endpoint.rotate_secret" {
		t.Errorf("audit %v", a)
	}
}

// An endpoint with no secret in force is no target, named in the error:
// its deliveries wait rather than go out unsigned. The others are still
// targets beside it.
func TestAnEndpointWithoutASecretInForceIsNoTarget(t *testing.T) {
	t.Parallel()
	s := newStore(t, endpoints.Limits{})
	ctx := context.Background()
	tenant := newTenant(t)
	signed, _ := create(t, s, endpoints.New{TenantID: tenant})
	expired, _ := create(t, s, endpoints.New{TenantID: tenant})
	if _, err := pool.Exec(ctx, `UPDATE endpoint_secrets SET expires_at = now() - interval '1 second' WHERE endpoint_id = $1`, expired.ID); err != nil {
		t.Fatal(err)
	}
	var bare string
	if err := pool.QueryRow(ctx, `INSERT INTO endpoints (tenant_id, url, filters) VALUES ($1, 'https://example.com/bare', '{*}') RETURNING id::text`,
		tenant).Scan(&bare); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{expired.ID, bare} {
		if tg, ok, err := s.Target(ctx, id); ok || !errors.Is(err, endpoints.ErrNoSecret) {
			t.Errorf("endpoint %s without a secret in force: target %v with %d keys, error %v; want none, ErrNoSecret", id, ok, len(tg.Keys), err)
		}
	}
	if tg, ok := target(t, s, signed.ID); !ok || len(tg.Keys) != 1 {
		t.Errorf("the signed endpoint: target %v with %d keys, want one key", ok, len(tg.Keys))
	}
	targets, err := s.Targets(ctx)
	if !errors.Is(err, endpoints.ErrNoSecret) || targets == nil {
		t.Fatalf("targets beside two endpoints without secrets: %v, %v; want the others and ErrNoSecret", len(targets), err)
	}
	for _, tg := range targets {
		if tg.ID == expired.ID || tg.ID == bare {
			t.Errorf("endpoint %s without a secret in force is a target", tg.ID)
		}
		if len(tg.Keys) == 0 {
			t.Errorf("target %s has no key to sign with", tg.ID)
		}
	}
}

func TestEndpointChangesAreAppliedAndAudited(t *testing.T) {
	t.Parallel()
	s := newStore(t, endpoints.Limits{})
	ctx := context.Background()
	e, _ := create(t, s, endpoints.New{TenantID: newTenant(t), Rate: 5, Concurrency: 2, Headers: map[string]string{"X-Old": "1"}})
	url, desc, unordered, rate := "https://other.example/in", "moved", false, 0
	headers := map[string]string{"X-New": "2"}
	got, err := s.UpdateEndpoint(ctx, e.ID, endpoints.Patch{URL: &url, Description: &desc, Filters: []string{"hmac.order.placed"},
		Ordered: &unordered, Rate: &rate, Headers: &headers})
	if err != nil {
		t.Fatal(err)
	}
	if got.URL != url || got.Description != desc || strings.Join(got.Filters, ",") != "hmac.order.placed" || got.Ordered ||
		got.RatePerSecond != nil || got.Concurrency == nil || *got.Concurrency != 2 || strings.Join(got.Headers, ",") != "X-New" {
		t.Errorf("patched: %+v", got)
	}
	tg, _ := target(t, s, e.ID)
	if tg.Headers["X-New"] != "2" || len(tg.Headers) != 1 || tg.Rate != 0 || tg.Concurrency != 2 {
		t.Errorf("target after the patch: %+v", tg)
	}
	cleared := map[string]string{}
	if got, err = s.UpdateEndpoint(ctx, e.ID, endpoints.Patch{Headers: &cleared}); err != nil || len(got.Headers) != 0 {
		t.Errorf("clear headers: %v %v", got.Headers, err)
	}
	if tg, _ = target(t, s, e.ID); tg.Headers != nil {
		t.Errorf("target headers after the clear: %v", tg.Headers)
	}
	if _, err := s.UpdateEndpoint(ctx, e.ID, endpoints.Patch{Filters: []string{}}); !errors.Is(err, refusal.ErrInvalid) {
		t.Errorf("patch to no filter: %v, want invalid", err)
	}
	if _, err := pool.Exec(ctx, `UPDATE endpoints SET failing_since = now() WHERE id = $1`, e.ID); err != nil {
		t.Fatal(err)
	}
	if got, err = s.DisableEndpoint(ctx, e.ID); err != nil || got.Enabled || got.DisabledReason != endpoints.ReasonOperator || got.DisabledAt == nil {
		t.Errorf("disabled: %+v %v", got, err)
	}
	if _, ok := target(t, s, e.ID); ok {
		t.Error("a disabled endpoint is still a target")
	}
	if got, err = s.EnableEndpoint(ctx, e.ID); err != nil || !got.Enabled || got.DisabledReason != "" || got.FailingSince != nil {
		t.Errorf("enabled: %+v %v", got, err)
	}
	if _, ok := target(t, s, e.ID); !ok {
		t.Error("an enabled endpoint is no target")
	}
	if err := s.DeleteEndpoint(ctx, e.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetEndpoint(ctx, e.ID); !errors.Is(err, refusal.ErrNotFound) {
		t.Errorf("deleted endpoint: %v, want not found", err)
	}
	if err := s.DeleteEndpoint(ctx, e.ID); !errors.Is(err, refusal.ErrNotFound) {
		t.Errorf("deleted twice: %v, want not found", err)
	}
	want := "endpoint.create,endpoint.update,endpoint.update,endpoint.disable,endpoint.enable,endpoint.delete"
	if a := auditActions(t, e.ID); strings.Join(a, ",") != want {
		t.Errorf("audit %v, want %s", a, want)
	}
}

func TestEndpointListPagesByTenant(t *testing.T) {
	t.Parallel()
	s := newStore(t, endpoints.Limits{})
	ctx := context.Background()
	tenant, other := newTenant(t), newTenant(t)
	var ids []string
	for range 3 {
		e, _ := create(t, s, endpoints.New{TenantID: tenant})
		ids = append(ids, e.ID)
	}
	create(t, s, endpoints.New{TenantID: other})
	if _, err := s.DisableEndpoint(ctx, ids[0]); err != nil {
		t.Fatal(err)
	}
	var seen []string
	cursor := ""
	for {
		page, next, err := s.ListEndpoints(ctx, endpoints.Filter{TenantID: tenant}, endpoints.Page{After: cursor, Limit: 2})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range page {
			seen = append(seen, e.ID)
		}
		if next == "" {
			break
		}
		cursor = next
	}
	if len(seen) != 3 {
		t.Errorf("listed %v, want the tenant's 3", seen)
	}
	enabled := true
	if page, _, err := s.ListEndpoints(ctx, endpoints.Filter{TenantID: tenant, Enabled: &enabled}, endpoints.Page{}); err != nil || len(page) != 2 {
		t.Errorf("enabled only: %d %v, want 2", len(page), err)
	}
	if _, _, err := s.ListEndpoints(ctx, endpoints.Filter{TenantID: "00000000-0000-4000-8000-000000000000"}, endpoints.Page{}); !errors.Is(err, refusal.ErrNotFound) {
		t.Errorf("unknown tenant: %v, want not found", err)
	}
	if _, _, err := s.ListEndpoints(ctx, endpoints.Filter{}, endpoints.Page{After: "nope"}); !errors.Is(err, refusal.ErrInvalid) {
		t.Errorf("bad cursor: %v, want invalid", err)
	}
}
