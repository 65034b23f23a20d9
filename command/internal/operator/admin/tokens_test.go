package admin_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluicehq/sluice/command/internal/operator/admin"
	"github.com/sluicehq/sluice/command/internal/operator/admintoken"
	"github.com/sluicehq/sluice/internal/listen"
)

// Expired, revoked, unknown and missing tokens are refused alike (401); a
// read token cannot act (403); an operate token can.
func TestTokensExpiredRevokedOrWrongRoleAreRefused(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	w := b.newWorld(t)
	disable := "/admin/v1/sources/" + w.source + "/disable"

	expiredRec, expired, err := b.tokens.Create(ctx, admintoken.New{Role: admintoken.RoleOperate, TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.pool.Exec(ctx, `UPDATE admin_tokens SET expires_at = now() - interval '1 second' WHERE id = $1`, expiredRec.ID); err != nil {
		t.Fatal(err)
	}
	revokedRec, revoked, err := b.tokens.Create(ctx, admintoken.New{Role: admintoken.RoleOperate})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.tokens.Revoke(ctx, revokedRec.ID); err != nil {
		t.Fatal(err)
	}
	for name, tok := range map[string]string{
		"expired": expired, "revoked": revoked, "unknown": admintoken.Prefix + "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
		"missing": "", "not ours": "sk_sluice_x",
	} {
		if status, got := b.do(t, tok, http.MethodPost, disable, nil); status != http.StatusUnauthorized {
			t.Errorf("%s token: %d %s, want 401", name, status, got)
		}
	}
	read := b.token(t, admintoken.RoleRead, "")
	if status, got := b.do(t, read, http.MethodPost, disable, nil); status != http.StatusForbidden {
		t.Errorf("read token acting: %d %s, want 403", status, got)
	}
	if status, _ := b.do(t, read, http.MethodGet, "/admin/v1/sources/"+w.source, nil); status != http.StatusOK {
		t.Errorf("read token reading: %d, want 200", status)
	}
	if n := b.count(t, `SELECT count(*) FROM sources WHERE id = $1 AND disabled_at IS NOT NULL`, w.source); n != 0 {
		t.Fatal("a refused token disabled the source")
	}
	operate := b.token(t, admintoken.RoleOperate, "")
	if status, got := b.do(t, operate, http.MethodPost, disable, nil); status != http.StatusOK {
		t.Errorf("operate token: %d %s, want 200", status, got)
	}
	if n := b.count(t, `SELECT count(*) FROM sources WHERE id = $1 AND disabled_at IS NOT NULL`, w.source); n != 1 {
		t.Fatal("the operate token did not disable the source")
	}
}

// Failed authentications from one address are limited: past the burst a
// bad token is answered 429 with Retry-After until the bucket refills. A
// valid token from that address is never refused, and spends nothing;
// every refusal is counted.
func TestFailedAuthenticationsAreLimitedButValidTokensNeverAre(t *testing.T) {
	t.Parallel()
	b := setup(t)
	srv := listen.NewAdmin("127.0.0.1:0", slog.New(slog.DiscardHandler), prometheus.NewRegistry(), nil)
	reg := prometheus.NewRegistry()
	admin.New(srv.Engine, admin.Config{Pool: b.pool, Store: b.store, FailedAuthRate: 0.001, FailedAuthBurst: 3, Metrics: reg},
		slog.New(slog.DiscardHandler))
	ts := httptest.NewServer(srv.Engine)
	t.Cleanup(ts.Close)
	good := b.token(t, admintoken.RoleRead, "")
	for range 5 { // a valid token before the failures spends no budget
		if status, got, _ := b.doAt(t, ts.URL, good, http.MethodGet, "/admin/v1/tenants", nil); status != http.StatusOK {
			t.Fatalf("valid token: %d %s", status, got)
		}
	}
	for i := range 3 {
		if status, got, _ := b.doAt(t, ts.URL, "slk_adm_wrong", http.MethodGet, "/admin/v1/tenants", nil); status != http.StatusUnauthorized {
			t.Fatalf("failure %d: %d %s, want 401", i+1, status, got)
		}
	}
	status, got, h := b.doAt(t, ts.URL, "slk_adm_wrong", http.MethodGet, "/admin/v1/tenants", nil)
	if status != http.StatusTooManyRequests {
		t.Fatalf("past the burst: %d %s, want 429", status, got)
	}
	if secs, err := strconv.Atoi(h.Get("Retry-After")); err != nil || secs < 1 {
		t.Errorf("Retry-After %q, want whole seconds", h.Get("Retry-After"))
	}
	if status, got, _ := b.doAt(t, ts.URL, good, http.MethodGet, "/admin/v1/tenants", nil); status != http.StatusOK {
		t.Errorf("a valid token from a limited address: %d %s, want 200", status, got)
	}
	if status, _, _ := b.doAt(t, ts.URL, "", http.MethodGet, "/admin/v1/tenants", nil); status != http.StatusTooManyRequests {
		t.Errorf("no token from a limited address: %d, want 429", status)
	}
	want := map[string]float64{"unauthenticated": 3, "limited": 2}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got2 := map[string]float64{}
	for _, f := range families {
		if f.GetName() != "sluice_admin_auth_refusals_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			got2[m.GetLabel()[0].GetValue()] = m.GetCounter().GetValue()
		}
	}
	if fmt.Sprint(got2) != fmt.Sprint(want) {
		t.Errorf("sluice_admin_auth_refusals_total %v, want %v", got2, want)
	}
}

// A token's lifetime is positive and bounded: none is made without an
// expiry (the default is 720 h), a negative or over a year is refused;
// a token made before without one keeps working and is flagged no_expiry
// by the list.
func TestTokenLifetimesArePositiveAndBounded(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	rec, _, err := b.tokens.Create(ctx, admintoken.New{Role: admintoken.RoleRead})
	if err != nil {
		t.Fatal(err)
	}
	if rec.ExpiresAt == nil || rec.ExpiresAt.Sub(rec.CreatedAt).Round(time.Hour) != admintoken.DefaultTTL || rec.NoExpiry {
		t.Errorf("a token given no lifetime: expires %v, want %s after creation", rec.ExpiresAt, admintoken.DefaultTTL)
	}
	for _, ttl := range []time.Duration{-time.Second, admintoken.MaxTTL + time.Second} {
		if _, _, err := b.tokens.Create(ctx, admintoken.New{Role: admintoken.RoleRead, TTL: ttl}); err == nil {
			t.Errorf("lifetime %s accepted", ttl)
		}
	}
	if n := b.count(t, `SELECT count(*) FROM admin_tokens WHERE expires_at IS NULL AND created_at > now() - interval '1 minute'`); n != 0 {
		t.Errorf("%d tokens were made without an expiry", n)
	}
	legacyRec, legacy, err := b.tokens.Create(ctx, admintoken.New{Role: admintoken.RoleRead, Name: t.Name()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.pool.Exec(ctx, `UPDATE admin_tokens SET expires_at = NULL WHERE id = $1`, legacyRec.ID); err != nil {
		t.Fatal(err)
	}
	if status, got := b.do(t, legacy, http.MethodGet, "/admin/v1/tenants?limit=1", nil); status != http.StatusOK {
		t.Errorf("a token made without an expiry: %d %s, want it to keep working", status, got)
	}
	root := b.token(t, admintoken.RoleRead, "")
	status, got := b.do(t, root, http.MethodGet, "/admin/v1/admin-tokens", nil)
	list := decode[struct {
		Items []admintoken.Token `json:"items"`
	}](t, got)
	flagged := map[string]bool{}
	for _, tok := range list.Items {
		flagged[tok.ID] = tok.NoExpiry
	}
	if status != http.StatusOK || !flagged[legacyRec.ID] || flagged[rec.ID] {
		t.Errorf("list of tokens: %d %s, want %s flagged no_expiry and %s not", status, got, legacyRec.ID, rec.ID)
	}
	all, err := b.tokens.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, tok := range all {
		if tok.ID == legacyRec.ID && !tok.NoExpiry {
			t.Error("admintoken.Store.List does not flag the token without an expiry")
		}
	}
	// Over the API: a lifetime in seconds, positive and at most a year.
	operate := b.token(t, admintoken.RoleOperate, "")
	for _, secs := range []int64{0, -1, 31536001} {
		if status, got := b.do(t, operate, http.MethodPost, "/admin/v1/admin-tokens", map[string]any{"role": "read", "expires_in_seconds": secs}); status != http.StatusUnprocessableEntity {
			t.Errorf("expires_in_seconds %d: %d %s, want 422", secs, status, got)
		}
	}
	status, got = b.do(t, operate, http.MethodPost, "/admin/v1/admin-tokens", map[string]any{"role": "read", "name": "by api"})
	made := decode[struct {
		admintoken.Token
		Secret string `json:"token"`
	}](t, got)
	if status != http.StatusCreated || made.ExpiresAt == nil || made.ExpiresAt.Sub(made.CreatedAt).Round(time.Hour) != admintoken.DefaultTTL ||
		!strings.HasPrefix(made.Secret, admintoken.Prefix) {
		t.Errorf("create a token over the API: %d %s, want 201 with a token expiring in %s", status, got, admintoken.DefaultTTL)
	}
	if status, got := b.do(t, made.Secret, http.MethodGet, "/admin/v1/tenants?limit=1", nil); status != http.StatusOK {
		t.Errorf("the token made over the API: %d %s", status, got)
	}
}

// Deployment-wide controls need an unscoped token: a tenant-scoped operate
// token cannot lift its own tenant's ingest limits or its source's body
// limit (403), and nothing changes; an unscoped one can.
func TestDeploymentControlsNeedAnUnscopedToken(t *testing.T) {
	t.Parallel()
	b := setup(t)
	w := b.newWorld(t)
	scoped := b.token(t, admintoken.RoleOperate, w.tenant)
	root := b.token(t, admintoken.RoleOperate, "")
	for _, c := range []struct {
		method, path string
		body         any
	}{
		{http.MethodPut, "/admin/v1/tenants/" + w.tenant + "/limits", map[string]any{"rate": 1e6, "burst": 1e6}},
		{http.MethodDelete, "/admin/v1/tenants/" + w.tenant + "/limits", nil},
		{http.MethodPut, "/admin/v1/sources/" + w.source + "/body-limit", map[string]any{"max_body_bytes": 26214400}},
	} {
		if status, got := b.do(t, scoped, c.method, c.path, c.body); status != http.StatusForbidden {
			t.Errorf("scoped %s %s: %d %s, want 403", c.method, c.path, status, got)
		}
	}
	if n := b.count(t, `SELECT count(*) FROM tenant_limits WHERE tenant_id = $1`, w.tenant); n != 0 {
		t.Error("a scoped token set its tenant's limits")
	}
	if n := b.count(t, `SELECT count(*) FROM sources WHERE id = $1 AND max_body_bytes IS NOT NULL`, w.source); n != 0 {
		t.Error("a scoped token set its source's body limit")
	}
	if status, got := b.do(t, root, http.MethodPut, "/admin/v1/tenants/"+w.tenant+"/limits", map[string]any{"rate": 50, "burst": 100}); status != http.StatusOK {
		t.Errorf("unscoped: %d %s", status, got)
	}
}
