package cli

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/uuid"
)

// An endpoint's life through the CLI: the secret printed once by the
// create and the rotation and never by a read, header values never shown,
// every change audited, and refusals in words (JSON with -o json).
func TestEndpointCommandsManageAnEndpoint(t *testing.T) {
	t.Parallel()
	tenant := newTenant(t).tenantID
	stdout, stderr, code := cli(t, "endpoint", "create", "--tenant", tenant, "--url", "https://receiver.example/cli",
		"--filter", "stripe.invoice.*", "--filter", "hmac.order.placed", "--header", "Authorization=Bearer TopSecretValue", "--rate", "5", "--unordered")
	if code != 0 {
		t.Fatalf("endpoint create exited %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(lines) < 2 || !strings.HasPrefix(lines[1], "whsec_") {
		t.Fatalf("endpoint create printed %q: want the id, then the secret", stdout)
	}
	id, secret := lines[0], lines[1]
	stdout, _, code = cli(t, "endpoint", "get", id, "-o", "json")
	var got struct {
		TenantID string   `json:"tenant_id"`
		Ordered  bool     `json:"ordered"`
		Headers  []string `json:"headers"`
		Figures  *struct {
			Pending int `json:"pending"`
		} `json:"figures"`
	}
	if code != 0 || json.Unmarshal([]byte(stdout), &got) != nil || got.TenantID != tenant || got.Ordered || got.Figures == nil ||
		strings.Join(got.Headers, ",") != "Authorization" {
		t.Errorf("endpoint get -o json: %d %s", code, stdout)
	}
	for _, args := range [][]string{{"endpoint", "get", id}, {"endpoint", "list", "--tenant", tenant}, {"endpoint", "list", "--tenant", tenant, "-o", "json"}} {
		out, _, code := cli(t, args...)
		if code != 0 || !strings.Contains(out, id) || strings.Contains(out, secret) || strings.Contains(out, "TopSecretValue") {
			t.Errorf("sluice %v: %d %s, want the endpoint without its secret or header value", args, code, out)
		}
	}
	if out, _, code := cli(t, "endpoint", "update", id, "--description", "moved", "--clear-headers", "--ordered", "-o", "json"); code != 0 ||
		!strings.Contains(out, `"description":"moved"`) || !strings.Contains(out, `"headers":[]`) || !strings.Contains(out, `"ordered":true`) {
		t.Errorf("endpoint update: %d %s", code, out)
	}
	if out, _, code := cli(t, "endpoint", "disable", id); code != 0 || !strings.Contains(out, "disabled (operator)") {
		t.Errorf("endpoint disable: %d %s", code, out)
	}
	if out, _, code := cli(t, "endpoint", "enable", id, "-o", "json"); code != 0 || !strings.Contains(out, `"enabled":true`) {
		t.Errorf("endpoint enable: %d %s", code, out)
	}
	out, _, code := cli(t, "endpoint", "rotate-secret", id, "--overlap", "1h", "-o", "json")
	var rotated struct {
		Secret        string `json:"secret"`
		ActiveSecrets int    `json:"active_secrets"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &rotated) != nil || !strings.HasPrefix(rotated.Secret, "whsec_") || rotated.Secret == secret ||
		rotated.ActiveSecrets != 2 {
		t.Errorf("endpoint rotate-secret: %d %s, want a new secret beside the old one", code, out)
	}
	if out, _, code := cli(t, "endpoint", "delete", id); code != 0 || !strings.Contains(out, id) {
		t.Errorf("endpoint delete: %d %s", code, out)
	}
	if _, _, code := cli(t, "endpoint", "get", id); code == 0 {
		t.Error("endpoint get after the delete succeeded")
	}
	want := "endpoint.create,endpoint.update,endpoint.disable,endpoint.enable,endpoint.rotate_secret,endpoint.delete"
	var actions string
	if err := suite.pool.QueryRow(t.Context(), `SELECT string_agg(action, ',' ORDER BY id) FROM admin_audit WHERE resource = 'endpoint' AND target_id = $1`, id).Scan(&actions); err != nil || actions != want {
		t.Errorf("audit %q %v, want %s", actions, err, want)
	}
}

func TestEndpointCommandsRefuseInWords(t *testing.T) {
	t.Parallel()
	tenant := newTenant(t).tenantID
	out, errOut, code := cli(t, "endpoint", "create", "--tenant", tenant, "--url", "http://receiver.example/", "--filter", "*",
		"--header", "X-Key=TopSecretValue", "-o", "json")
	if code != 1 || !strings.Contains(out, `"error"`) || !strings.Contains(errOut, "https") || strings.Contains(out+errOut, "TopSecretValue") {
		t.Errorf("plain http: %d %s %s, want a refusal naming https", code, out, errOut)
	}
	if _, _, code := cli(t, "endpoint", "create", "--tenant", tenant, "--url", "https://receiver.example/"); code != 2 {
		t.Errorf("create without --filter exited %d, want 2 (usage)", code)
	}
	if _, errOut, code := cli(t, "endpoint", "create", "--tenant", tenant, "--url", "https://r.example/", "--filter", "*", "--rate", "1000"); code != 1 ||
		!strings.Contains(errOut, "rate_per_second") {
		t.Errorf("rate past the cap: %d %s", code, errOut)
	}
	if _, errOut, code := cli(t, "endpoint", "update", uuid.NewString(), "--description", "x"); code != 1 ||
		!strings.Contains(errOut, "no endpoint") {
		t.Errorf("update of an unknown endpoint: %d %s", code, errOut)
	}
	out, errOut, code = cli(t, "endpoint", "create", "--tenant", tenant, "--url", "https://r.example/", "--filter", "*",
		"--expression", "data.object.amount_paid +", "-o", "json")
	if code != 1 || !strings.Contains(errOut, "expression: at 1:") || !strings.Contains(out, `"field":"expression"`) {
		t.Errorf("an expression that does not parse: %d %s %s, want exit 1 naming the field and where", code, out, errOut)
	}
}

// The CLI holds an endpoint to the deployment's policy, read from the same
// variables as the processes read it: plain http and loopback are refused
// by default with the setting to change named, accepted where the
// deployment allows them (as make run's does); `endpoint test` then sends
// a signed test event to the receiver, dialled under the same policy.
func TestEndpointCommandsFollowTheDeploymentsPolicy(t *testing.T) {
	t.Parallel()
	tenant := newTenant(t).tenantID
	got := make(chan http.Header, 4)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Clone()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(receiver.Close)
	url := receiver.URL + "/hooks"
	create := []string{"endpoint", "create", "--tenant", tenant, "--url", url, "--filter", "*"}
	for _, c := range []struct {
		env  []string
		want string
	}{
		{nil, "--delivery-allow-http, SLUICE_DELIVERY_ALLOW_HTTP"},
		{[]string{"SLUICE_DELIVERY_ALLOW_HTTP=true"}, "--delivery-allow-networks (SLUICE_DELIVERY_ALLOW_NETWORKS)"},
		{[]string{"SLUICE_DELIVERY_ALLOW_HTTP=true", "SLUICE_DELIVERY_ALLOW_NETWORKS=10.0.0.0/8"}, "--delivery-allow-networks (SLUICE_DELIVERY_ALLOW_NETWORKS)"},
	} {
		_, errOut, code := cliWith(t, append(cliEnv(), c.env...), create...)
		if code != 1 || !strings.Contains(errOut, c.want) {
			t.Errorf("endpoint create %s with %v: exit %d, %q; want 1 naming %s", url, c.env, code, errOut, c.want)
		}
	}
	local := append(cliEnv(), "SLUICE_DELIVERY_ALLOW_HTTP=true", "SLUICE_DELIVERY_ALLOW_NETWORKS=127.0.0.0/8,::1/128")
	out, errOut, code := cliWith(t, local, create...)
	if code != 0 {
		t.Fatalf("endpoint create %s where the deployment allows it: exit %d, %s", url, code, errOut)
	}
	id := strings.SplitN(out, "\n", 2)[0]
	if _, errOut, code := cliWith(t, cliEnv(), "endpoint", "test", id); code != 1 || !strings.Contains(errOut, "did not accept") {
		t.Errorf("endpoint test under the default policy: exit %d, %q; want the loopback address refused when dialled", code, errOut)
	}
	out, errOut, code = cliWith(t, local, "endpoint", "test", id, "-o", "json")
	var a struct {
		Status int `json:"status"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &a) != nil || a.Status != http.StatusNoContent {
		t.Fatalf("endpoint test: exit %d, %s %s; want the receiver's 204", code, out, errOut)
	}
	select {
	case h := <-got:
		if !strings.HasPrefix(h.Get("Webhook-Signature"), "v1,") || h.Get("Ce-Type") != "sluice.test" {
			t.Errorf("the receiver got %v, want a signed sluice.test event", h)
		}
	default:
		t.Error("the receiver got nothing")
	}
	if n := count(t, `SELECT count(*) FROM admin_audit WHERE action = 'endpoint.test' AND target_id = $1 AND tenant_id = $2`, id, tenant); n != 2 {
		t.Errorf("audit rows of endpoint test: %d, want 2", n)
	}
}
