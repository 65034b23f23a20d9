package admin_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluicehq/sluice/internal/listen"
	"github.com/sluicehq/sluice/internal/operator/admin"
	"github.com/sluicehq/sluice/internal/operator/admintoken"
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

// Failed authentications from one address are limited: past the burst the
// answer is 429 with Retry-After, even for a valid token, until the bucket
// refills.
func TestFailedAuthenticationsAreRateLimitedPerAddress(t *testing.T) {
	t.Parallel()
	b := setup(t)
	srv := listen.NewAdmin("127.0.0.1:0", slog.New(slog.DiscardHandler), prometheus.NewRegistry(), nil)
	admin.New(srv.Engine, admin.Config{Pool: b.pool, Store: b.store, FailedAuthRate: 0.001, FailedAuthBurst: 3}, slog.New(slog.DiscardHandler))
	ts := httptest.NewServer(srv.Engine)
	t.Cleanup(ts.Close)
	good := b.token(t, admintoken.RoleRead, "")
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
	if status, _, _ := b.doAt(t, ts.URL, good, http.MethodGet, "/admin/v1/tenants", nil); status != http.StatusTooManyRequests {
		t.Errorf("a valid token from a limited address: %d, want 429", status)
	}
}
