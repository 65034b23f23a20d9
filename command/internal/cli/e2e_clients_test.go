package cli

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/sluicehq/sluice/adminclient"
	"github.com/sluicehq/sluice/command/internal/operator/admintoken"
	"github.com/sluicehq/sluice/internal/testenv"
)

// The admin API's clients (adminclient, clients/typescript, clients/python)
// each drive a live pipeline through the same story: a tenant (and the
// same one again under its Idempotency-Key), a Stripe source, an endpoint
// and a token scoped to the tenant; a signed webhook delivered to the
// endpoint, seen in the endpoint's deliveries; 250 events paged through with
// the client's iterator; a refusal as the language's error carrying the
// problem detail.

// clientStoryEvents is how many events each story pages through.
const clientStoryEvents = 250

func TestGoClientDrivesTheAdminAPI(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, err := adminclient.New(suite.adminURL, adminToken(t, admintoken.RoleOperate, ""))
	if err != nil {
		t.Fatal(err)
	}
	s := testenv.RandomSuffix()

	key := "tenant-" + s
	first, err := c.CreateTenantWithResponse(ctx, &adminclient.CreateTenantParams{IdempotencyKey: &key}, adminclient.TenantCreateInBody{Name: "go-" + s})
	if err != nil {
		t.Fatal(err)
	}
	again, err := c.CreateTenantWithResponse(ctx, &adminclient.CreateTenantParams{IdempotencyKey: &key}, adminclient.TenantCreateInBody{Name: "go-" + s})
	if err != nil {
		t.Fatal(err)
	}
	if again.JSON201.Id != first.JSON201.Id {
		t.Fatalf("the create sent again under its key made tenant %s, the first %s", again.JSON201.Id, first.JSON201.Id)
	}
	tenant := uuid.MustParse(first.JSON201.Id)

	secret := "whsec_" + s + s
	src, err := c.CreateSourceWithResponse(ctx, nil, adminclient.NewSourceBody{TenantId: tenant, Kind: adminclient.NewSourceBodyKindStripe,
		Account: "acct_" + s, Secret: &secret})
	if err != nil {
		t.Fatal(err)
	}
	receiver := newEndpointServer(t, nil)
	ep, err := c.CreateEndpointWithResponse(ctx, tenant, nil, adminclient.NewEndpointBody{Url: receiver.URL, Filters: []string{"*"}})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := c.CreateAdminTokenWithResponse(ctx, nil, adminclient.NewTokenBody{Role: adminclient.NewTokenBodyRoleRead, TenantId: &tenant})
	if err != nil {
		t.Fatal(err)
	}
	scoped, err := adminclient.New(suite.adminURL, tok.JSON201.Token)
	if err != nil {
		t.Fatal(err)
	}

	f := tenantFixture{tenantID: tenant.String(), sourceID: src.JSON201.Id, secret: secret}
	if code := f.sendSigned(t, invoicePaid("evt_"+s, "in_"+s, "cus_"+s, 0)); code != http.StatusAccepted {
		t.Fatalf("signed webhook answered %d", code)
	}
	endpoint := uuid.MustParse(ep.JSON201.Id)
	delivered := adminclient.ListDeliveriesParamsStateDelivered
	deadline := time.Now().Add(time.Minute)
	for n := 0; n == 0; {
		if time.Now().After(deadline) {
			t.Fatal("no delivery of the endpoint delivered within a minute")
		}
		for d, err := range scoped.ListDeliveriesAll(ctx, adminclient.ListDeliveriesParams{EndpointId: &endpoint, State: &delivered}) {
			if err != nil {
				t.Fatal(err)
			}
			if d.EventId == "evt_"+s {
				n++
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	if len(receiver.requests()) == 0 {
		t.Fatal("the endpoint's delivery is delivered, and its receiver got nothing")
	}

	for i := 1; i < clientStoryEvents; i++ {
		if code := f.sendSigned(t, invoicePaid(fmt.Sprintf("evt_%s_%d", s, i), fmt.Sprintf("in_%s_%d", s, i), "cus_"+s, 0)); code != http.StatusAccepted {
			t.Fatalf("webhook %d answered %d", i, code)
		}
	}
	source := uuid.MustParse(src.JSON201.Id)
	limit := int64(40)
	seen := map[string]bool{}
	for ev, err := range scoped.SearchEventsAll(ctx, adminclient.SearchEventsParams{SourceId: &source, Limit: &limit}) {
		if err != nil {
			t.Fatal(err)
		}
		seen[ev.EventId] = true
	}
	if len(seen) != clientStoryEvents {
		t.Fatalf("the iterator yielded %d distinct events, want %d", len(seen), clientStoryEvents)
	}

	_, err = scoped.GetTenantWithResponse(ctx, uuid.New())
	var p *adminclient.Problem
	if !errors.As(err, &p) || p.Status == nil || *p.Status != http.StatusNotFound || p.RequestId == nil || *p.RequestId == "" {
		t.Fatalf("an unknown tenant: %v, want a *Problem of status 404 with its request id", err)
	}
}

// clientEnv is the environment a TypeScript or Python client test runs
// with: where the admin API and ingest are, and an unscoped operate token.
func clientEnv(t *testing.T) []string {
	return append(hostEnviron(), "SLUICE_ADMIN_URL="+suite.adminURL, "SLUICE_INGEST_URL="+suite.baseURL,
		"SLUICE_ADMIN_TOKEN="+adminToken(t, admintoken.RoleOperate, ""), fmt.Sprintf("SLUICE_CLIENT_EVENTS=%d", clientStoryEvents))
}

// TestTypeScriptClientDrivesTheAdminAPI runs clients/typescript's tests
// (npm test) against the pipeline. SLUICE_TS_CLIENT=1 says its
// dependencies are installed (make test runs clients/typescript/install.sh);
// without it the test is skipped.
func TestTypeScriptClientDrivesTheAdminAPI(t *testing.T) {
	t.Parallel()
	if os.Getenv("SLUICE_TS_CLIENT") == "" {
		t.Skip("SLUICE_TS_CLIENT is unset: clients/typescript's dependencies may not be installed (make test sets it)")
	}
	runClientTests(t, "../../../clients/typescript", "npm", "test", "--silent")
}

// TestPythonClientDrivesTheAdminAPI runs clients/python's tests (pytest)
// against the pipeline with SLUICE_PY_CLIENT, the python of a virtual
// environment holding the client (make test installs it with
// clients/python/install.sh); without it the test is skipped.
func TestPythonClientDrivesTheAdminAPI(t *testing.T) {
	t.Parallel()
	python := os.Getenv("SLUICE_PY_CLIENT")
	if python == "" {
		t.Skip("SLUICE_PY_CLIENT names no python with the client installed (make test sets it)")
	}
	runClientTests(t, "../../../clients/python", python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests")
}

func runClientTests(t *testing.T, dir, name string, args ...string) {
	t.Helper()
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir, cmd.Env = abs, clientEnv(t)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v in %s: %v\n%s", name, args, dir, err, out)
	}
	t.Logf("%s", out)
}
