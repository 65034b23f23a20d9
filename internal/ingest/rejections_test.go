package ingest_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/ingest"
	"github.com/sluicehq/sluice/internal/provider/signature"
	"github.com/sluicehq/sluice/internal/store/tenancy"
	"github.com/sluicehq/sluice/internal/testenv"
)

// Every refusal stores nothing: no inbox, conflict, outbox, attempt or
// effect row for the tenant, whatever the reason.
func TestEveryRejectionStoresNothing(t *testing.T) {
	t.Parallel()
	b := setup(t, ingest.Config{MaxBodyBytes: 4096})
	ctx := context.Background()
	tenant := b.newTenant(t)
	stripeSecret := "whsec_" + b.secret
	stripeSrc := b.newSource(t, tenancy.NewSource{TenantID: tenant, Kind: "stripe", Secret: stripeSecret})
	ghSrc := b.newSource(t, tenancy.NewSource{TenantID: tenant, Kind: "github", Secret: "gh", MaxBodyBytes: 2048})
	walled := b.newSource(t, tenancy.NewSource{TenantID: tenant, Kind: "stripe", Secret: stripeSecret,
		IPAllowlist: []netip.Prefix{netip.MustParsePrefix("192.0.2.0/24")}})
	disabled := b.newSource(t, tenancy.NewSource{TenantID: tenant, Kind: "stripe", Secret: stripeSecret})
	if err := b.store.DisableSource(ctx, disabled); err != nil {
		t.Fatal(err)
	}
	if _, _, err := b.store.CreateAPIKey(ctx, tenant); err != nil {
		t.Fatal(err)
	}
	var apiSrc string
	if err := b.pool.QueryRow(ctx, `SELECT id::text FROM sources WHERE tenant_id = $1 AND kind = 'api'`, tenant).Scan(&apiSrc); err != nil {
		t.Fatal(err)
	}

	body := paid("evt_r", "in_r")
	now := time.Now()
	signed := stripeHeader(stripeSecret, body, now)
	ghBody := []byte(`{"action":"created","installation":{"id":1}}`)
	ghSigned := http.Header{"X-Hub-Signature-256": {signature.SignGitHub("gh", ghBody)}, "X-Github-Delivery": {"d1"}, "X-Github-Event": {"installation"}}
	big := bytes.Repeat([]byte("x"), 5000)
	cases := map[string]struct {
		method, path string
		body         []byte
		h            http.Header
		want         int
	}{
		"bad signature":         {"POST", "/v1/ingest/" + stripeSrc, body, http.Header{"Stripe-Signature": {"t=1,v1=00"}}, http.StatusUnauthorized},
		"no signature":          {"POST", "/v1/ingest/" + stripeSrc, body, nil, http.StatusUnauthorized},
		"signed by another key": {"POST", "/v1/ingest/" + stripeSrc, body, stripeHeader("whsec_other", body, now), http.StatusUnauthorized},
		"body changed":          {"POST", "/v1/ingest/" + stripeSrc, paid("evt_r", "in_other"), signed, http.StatusUnauthorized},
		"stale timestamp":       {"POST", "/v1/ingest/" + stripeSrc, body, stripeHeader(stripeSecret, body, now.Add(-6*time.Minute)), http.StatusUnauthorized},
		"future timestamp":      {"POST", "/v1/ingest/" + stripeSrc, body, stripeHeader(stripeSecret, body, now.Add(6*time.Minute)), http.StatusUnauthorized},
		"github bad signature":  {"POST", "/v1/ingest/" + ghSrc, ghBody, http.Header{"X-Hub-Signature-256": {signature.SignGitHub("nope", ghBody)}, "X-Github-Delivery": {"d2"}, "X-Github-Event": {"installation"}}, http.StatusUnauthorized},
		"oversized body":        {"POST", "/v1/ingest/" + stripeSrc, big, stripeHeader(stripeSecret, big, now), http.StatusRequestEntityTooLarge},
		"over the source limit": {"POST", "/v1/ingest/" + ghSrc, append(ghBody, bytes.Repeat([]byte(" "), 3000)...), ghSigned, http.StatusRequestEntityTooLarge},
		"wrong content type":    {"POST", "/v1/ingest/" + stripeSrc, body, http.Header{"Content-Type": {"text/plain"}, "Stripe-Signature": signed["Stripe-Signature"]}, http.StatusUnsupportedMediaType},
		"unknown source":        {"POST", "/v1/ingest/00000000-0000-0000-0000-000000000000", body, signed, http.StatusNotFound},
		"source id not a uuid":  {"POST", "/v1/ingest/nope", body, signed, http.StatusNotFound},
		"disabled source":       {"POST", "/v1/ingest/" + disabled, body, signed, http.StatusNotFound},
		"api source as webhook": {"POST", "/v1/ingest/" + apiSrc, body, signed, http.StatusNotFound},
		"wrong method":          {"PUT", "/v1/ingest/" + stripeSrc, body, signed, http.StatusMethodNotAllowed},
		"ip not allowed":        {"POST", "/v1/ingest/" + walled, body, signed, http.StatusForbidden},
		"forwarded-for ignored": {"POST", "/v1/ingest/" + walled, body, http.Header{"Stripe-Signature": signed["Stripe-Signature"], "X-Forwarded-For": {"192.0.2.10"}}, http.StatusForbidden},
		"no api key":            {"POST", "/v1/events", []byte(`{"events":[]}`), nil, http.StatusUnauthorized},
		"wrong api key":         {"POST", "/v1/events", []byte(`{"events":[]}`), http.Header{"Authorization": {"Bearer sk_sluice_nope"}}, http.StatusUnauthorized},
	}
	for name, tc := range cases {
		req, _ := http.NewRequest(tc.method, b.srv.URL+tc.path, bytes.NewReader(tc.body))
		req.Header.Set("Content-Type", "application/json")
		for k, v := range tc.h {
			req.Header[k] = v
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("%s: status %d, want %d", name, resp.StatusCode, tc.want)
		}
	}
	if n := b.storedFor(t, tenant); n != 0 {
		t.Fatalf("rejected requests left %d rows", n)
	}
	// The same delivery, correctly signed, is accepted: the refusals above
	// were for their reason, not a broken source.
	if status, _ := b.post(t, "/v1/ingest/"+stripeSrc, body, stripeHeader(stripeSecret, body, time.Now())); status != http.StatusAccepted {
		t.Fatalf("control delivery: status %d", status)
	}
}

// A body streamed without Content-Length is cut at the limit, 413.
func TestChunkedBodyOverTheLimitIsRefused(t *testing.T) {
	t.Parallel()
	b := setup(t, ingest.Config{MaxBodyBytes: 1024})
	pr, pw := io.Pipe()
	go func() {
		for range 64 {
			if _, err := pw.Write(bytes.Repeat([]byte("x"), 1024)); err != nil {
				return
			}
		}
		pw.Close()
	}()
	req, _ := http.NewRequest(http.MethodPost, b.srv.URL+"/v1/ingest/"+b.sourceID, pr)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("status %d, want 413", resp.StatusCode)
	}
	if n := b.storedFor(t, b.tenantID); n != 0 {
		t.Fatalf("%d rows stored", n)
	}
}

func TestTenantOverItsRateGets429WithRetryAfterAndNothingStored(t *testing.T) {
	t.Parallel()
	b := setup(t, ingest.Config{TenantRate: 0.01, TenantBurst: 2})
	for i := range 2 {
		if got := b.send(t, paid(fmt.Sprintf("evt_ok%d", i), "in_rl"), nil); got != http.StatusAccepted {
			t.Fatalf("within the burst: status %d", got)
		}
	}
	body := paid("evt_limited", "in_rl")
	req, _ := http.NewRequest(http.MethodPost, b.srv.URL+"/v1/ingest/"+b.sourceID, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Stripe-Signature", stripeHeader(b.secret, body, time.Now()).Get("Stripe-Signature"))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("status %d Retry-After %q, want 429 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	if n := b.countFor(t, `SELECT count(*) FROM inbox WHERE tenant_id = $1 AND event_id = 'evt_limited'`, b.tenantID); n != 0 {
		t.Fatal("a rate-limited event was stored")
	}
	if n := b.countFor(t, `SELECT count(*) FROM delivery_log WHERE tenant_id = $1 AND event_id = 'evt_limited'`, b.tenantID); n != 0 {
		t.Fatal("a rate-limited event left an attempt row")
	}
	// Another tenant has its own bucket.
	other := b.newTenant(t)
	secret := "whsec_o" + b.secret
	src := b.newSource(t, tenancy.NewSource{TenantID: other, Kind: "stripe", Secret: secret})
	if status, _ := b.post(t, "/v1/ingest/"+src, body, stripeHeader(secret, body, time.Now())); status != http.StatusAccepted {
		t.Fatalf("another tenant: status %d", status)
	}
}

// A tenant beyond its rate is refused before its deliveries' bodies are
// read and their signatures checked (a request with a bad signature gets
// the 429, not the 401), and requests nobody signed never drain the
// bucket: after any number of them, the burst's worth of genuine
// deliveries still passes.
func TestAFloodIsRefusedBeforeVerificationAndUnsignedRequestsDrainNothing(t *testing.T) {
	t.Parallel()
	b := setup(t, ingest.Config{TenantRate: 0.01, TenantBurst: 3, AuthFailureRate: 1000, AuthFailureBurst: 1000})
	unsigned := func(r *http.Request) { r.Header.Set("Stripe-Signature", "t=1,v1=00") }
	for i := range 20 {
		if got := b.send(t, paid(fmt.Sprintf("evt_u%d", i), "in_u"), unsigned); got != http.StatusUnauthorized {
			t.Fatalf("unsigned request %d with tokens left: status %d, want 401", i, got)
		}
	}
	for i := range 3 {
		if got := b.send(t, paid(fmt.Sprintf("evt_g%d", i), "in_g"), nil); got != http.StatusAccepted {
			t.Fatalf("genuine delivery %d of the burst after 20 unsigned requests: status %d, want 202", i, got)
		}
	}
	if got := b.send(t, paid("evt_late", "in_g"), unsigned); got != http.StatusTooManyRequests {
		t.Fatalf("unsigned request to a tenant past its rate: status %d, want 429 before any verification", got)
	}
	if n := b.count(t, `SELECT count(*) FROM delivery_log WHERE tenant_id = $1`); n != 3 {
		t.Fatalf("attempts = %d, want the 3 genuine ones", n)
	}
}

// A tenant's own limits (tenant_limits) replace the deployment's for that
// tenant within the source cache TTL, and clearing them restores the
// deployment's; other tenants keep the deployment's.
func TestTenantLimitsOverrideTheDeploymentsWithinTheCacheTTL(t *testing.T) {
	t.Parallel()
	b := setup(t, ingest.Config{TenantRate: 1000, TenantBurst: 1000, SourceCacheTTL: 200 * time.Millisecond})
	ctx := t.Context()
	if err := b.store.SetLimits(ctx, b.tenantID, tenancy.Limits{Rate: 0.001, Burst: 1}); err != nil {
		t.Fatal(err)
	}
	i := 0
	send := func() int {
		i++
		return b.send(t, paid(fmt.Sprintf("evt_tl%d", i), "in_tl"), nil)
	}
	// The cached source may carry the deployment's rate for one TTL; then
	// the override's burst of 1 leaves at most one more through.
	testenv.Eventually(t, 10*time.Second, "the override to refuse", func() (bool, error) {
		return send() == http.StatusTooManyRequests, nil
	})
	if got := send(); got != http.StatusTooManyRequests {
		t.Fatalf("under the override: status %d, want 429", got)
	}
	other := b.newTenant(t)
	secret := "whsec_o" + b.secret
	src := b.newSource(t, tenancy.NewSource{TenantID: other, Kind: "stripe", Secret: secret})
	for j := range 3 {
		body := paid(fmt.Sprintf("evt_tlo%d", j), "in_tlo")
		if status, _ := b.post(t, "/v1/ingest/"+src, body, stripeHeader(secret, body, time.Now())); status != http.StatusAccepted {
			t.Fatalf("another tenant: status %d", status)
		}
	}
	if err := b.store.ClearLimits(ctx, b.tenantID); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 10*time.Second, "the deployment's rate to return", func() (bool, error) {
		return send() == http.StatusAccepted, nil
	})
}

// Failed authentications are limited per source, but a valid signature still
// passes: knowing the URL is not enough to lock the provider out.
func TestFailedAuthenticationsAreLimitedPerSource(t *testing.T) {
	t.Parallel()
	b := setup(t, ingest.Config{AuthFailureRate: 0.1, AuthFailureBurst: 3})
	statuses := map[int]int{}
	for range 6 {
		statuses[b.send(t, paid("evt_f", "in_f"), func(r *http.Request) { r.Header.Set("Stripe-Signature", "t=1,v1=00") })]++
	}
	if statuses[http.StatusUnauthorized] != 3 || statuses[http.StatusTooManyRequests] != 3 {
		t.Fatalf("statuses %v, want 3x401 then 3x429", statuses)
	}
	if got := b.send(t, paid("evt_f", "in_f"), nil); got != http.StatusAccepted {
		t.Fatalf("genuine delivery after the failures: status %d", got)
	}
	if n := b.count(t, `SELECT count(*) FROM delivery_log WHERE tenant_id = $1`); n != 1 {
		t.Fatalf("attempts = %d, want only the genuine one", n)
	}
}

// Invariant 9: a source's secret only ever produces rows for its own tenant,
// whatever the payload claims.
func TestSourceSecretOnlyProducesRowsForItsOwnTenant(t *testing.T) {
	t.Parallel()
	b := setup(t, ingest.Config{})
	victim := b.newTenant(t)
	victimSecret := "whsec_v" + b.secret
	victimSrc := b.newSource(t, tenancy.NewSource{TenantID: victim, Kind: "stripe", Secret: victimSecret})

	// The attacker's own secret, sent to the victim's source: refused.
	body := paid("evt_x", "in_x")
	if status, _ := b.post(t, "/v1/ingest/"+victimSrc, body, stripeHeader(b.secret, body, time.Now())); status != http.StatusUnauthorized {
		t.Fatalf("another tenant's secret on the victim's source: status %d, want 401", status)
	}
	// A payload naming the victim, on the attacker's own source: stored for
	// the attacker.
	claims := fmt.Appendf(nil, `{"id":"evt_y","type":"invoice.paid","created":%d,"tenant_id":%q,"account":%q,"data":{"object":{"id":"in_y","object":"invoice","customer":"cus_1","amount_paid":100,"status":"paid"}}}`,
		time.Now().Unix(), victim, "acct_victim")
	if got := b.send(t, claims, nil); got != http.StatusAccepted {
		t.Fatalf("status %d", got)
	}
	if n := b.storedFor(t, victim); n != 0 {
		t.Fatalf("%d rows for the victim", n)
	}
	var tenant, header string
	if err := b.pool.QueryRow(context.Background(), `SELECT i.tenant_id::text, o.headers->>'ce_tenantid' FROM inbox i JOIN outbox o ON o.inbox_id = i.id
WHERE i.source_id = $1 AND i.event_id = 'evt_y'`, b.sourceID).Scan(&tenant, &header); err != nil {
		t.Fatal(err)
	}
	if tenant != b.tenantID || header != b.tenantID {
		t.Fatalf("stored for tenant %s (header %s), want the source's %s", tenant, header, b.tenantID)
	}
}

func TestRotatedSecretOverlapsThenExpiresAndDisableRefusesAtOnce(t *testing.T) {
	t.Parallel()
	b := setup(t, ingest.Config{SourceCacheTTL: time.Millisecond})
	ctx := context.Background()
	oldSecret, newSecret := b.secret, "whsec_new"+b.secret
	sendWith := func(secret, id string) int {
		body := paid(id, "in_rot")
		status, _ := b.post(t, "/v1/ingest/"+b.sourceID, body, stripeHeader(secret, body, time.Now()))
		return status
	}
	if _, err := b.store.RotateSecret(ctx, b.sourceID, newSecret, time.Hour); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Millisecond) // past the cache TTL, not a synchronisation
	if s := sendWith(oldSecret, "evt_rot1"); s != http.StatusAccepted {
		t.Fatalf("old secret during the overlap: %d", s)
	}
	if s := sendWith(newSecret, "evt_rot2"); s != http.StatusAccepted {
		t.Fatalf("new secret: %d", s)
	}
	newest := "whsec_newest" + b.secret
	if _, err := b.store.RotateSecret(ctx, b.sourceID, newest, 0); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Millisecond)
	for _, s := range []string{oldSecret, newSecret} {
		if got := sendWith(s, "evt_rot3"); got != http.StatusUnauthorized {
			t.Fatalf("expired secret: %d, want 401", got)
		}
	}
	if s := sendWith(newest, "evt_rot4"); s != http.StatusAccepted {
		t.Fatalf("newest secret: %d", s)
	}
	if err := b.store.DisableSource(ctx, b.sourceID); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Millisecond)
	if s := sendWith(newest, "evt_rot5"); s != http.StatusNotFound {
		t.Fatalf("disabled source: %d, want 404", s)
	}
	if n := b.inbox(t); n != 3 {
		t.Fatalf("inbox rows = %d, want 3", n)
	}
}
