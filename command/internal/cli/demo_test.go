package cli

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/provider/kinds/stripe/stripetest"
	"github.com/sluicehq/sluice/internal/testenv"
)

// demoWorld is what make run's dev/demo serves: a fake Stripe API holding
// an invoice of the demo's customer whose webhook never came, and a
// receiver for the demo endpoint.
func demoWorld(t *testing.T) (stripeURL, receiverURL string) {
	t.Helper()
	api := stripetest.New(t)
	s := testenv.RandomSuffix()
	api.Record(stripetest.Event{ID: "evt_missed_" + s, Type: "invoice.paid", Created: time.Now().Add(-10 * time.Minute), APIVersion: "2024-06-20",
		Object: map[string]any{"id": "in_missed_" + s, "object": "invoice", "customer": demoCustomer, "amount_paid": 3000, "currency": "usd", "status": "paid"}})
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	t.Cleanup(receiver.Close)
	return api.URL, receiver.URL + "/hooks"
}

// The demo gives every console page its content on one tenant: a conflict
// (the same event id naming another invoice, not the same invoice with
// another amount, which a Stripe event does not count), a dead letter, an
// event type, an endpoint on the receiver, a reconciliation run that
// recovers the missed invoice. Run again with --state, it uses the same
// tenant and points the source and the endpoint at where the fakes are
// now, as make run does after a restart.
func TestDemoFillsEveryPageOnOneTenantItKeeps(t *testing.T) {
	t.Parallel()
	state := filepath.Join(t.TempDir(), "demo.json")
	env := append(cliEnv(), "SLUICE_INGEST_URL="+suite.baseURL, "SLUICE_DELIVERY_ALLOW_HTTP=true", "SLUICE_DELIVERY_ALLOW_NETWORKS=127.0.0.0/8")
	demo := func(stripeURL, receiverURL string) demoState {
		t.Helper()
		out, stderr, code := cliWith(t, env, "demo", "--state", state, "--stripe-api", stripeURL, "--receiver", receiverURL, "--console-token")
		if code != 0 || !strings.Contains(out, `"outcome":"conflict"`) {
			t.Fatalf("sluice demo: exit %d\n%s%s\nwant a conflict", code, out, stderr)
		}
		var d demoState
		b, err := os.ReadFile(state)
		if err == nil {
			err = json.Unmarshal(b, &d)
		}
		if err != nil || d.TenantID == "" || d.ConsoleToken == "" {
			t.Fatalf("--state %s: %v %s", state, err, b)
		}
		return d
	}
	stripeURL, receiverURL := demoWorld(t)
	first := demo(stripeURL, receiverURL)
	tenant := first.TenantID
	for what, query := range map[string]string{
		"conflict":           `SELECT count(*) FROM inbox_conflicts c JOIN inbox i ON i.id = c.inbox_id WHERE i.tenant_id = $1`,
		"event type":         `SELECT count(*) FROM event_types WHERE tenant_id = $1`,
		"endpoint":           `SELECT count(*) FROM endpoints WHERE tenant_id = $1`,
		"reconciliation run": `SELECT count(*) FROM reconcile_runs r JOIN sources s ON s.id = r.source_id WHERE s.tenant_id = $1 AND r.outcome = 'ok'`,
		"recovered invoice":  `SELECT count(*) FROM inbox WHERE tenant_id = $1 AND object_id LIKE 'in_missed_%'`,
	} {
		if n := count(t, query, tenant); n != 1 {
			t.Errorf("the demo's %s: %d, want 1", what, n)
		}
	}
	testenv.Eventually(t, time.Minute, "the demo's dead letter", func() (bool, error) {
		return count(t, `SELECT count(*) FROM dead_letters WHERE headers->>'ce_tenantid' = $1`, tenant) == 1, nil
	})

	stripeURL, receiverURL = demoWorld(t) // the fakes restarted elsewhere
	second := demo(stripeURL, receiverURL)
	if second.TenantID != tenant || second.SourceID != first.SourceID || second.EndpointID != first.EndpointID || second.ConsoleToken != first.ConsoleToken {
		t.Errorf("second run's state %+v, want the first's %+v", second, first)
	}
	if n := count(t, `SELECT count(*) FROM endpoints WHERE tenant_id = $1 AND url = $2`, tenant, receiverURL); n != 1 {
		t.Errorf("the demo endpoint does not point at the receiver's new address %s", receiverURL)
	}
	if _, creds, err := suite.store.APICredentials(t.Context(), first.SourceID); err != nil || !strings.Contains(string(creds), stripeURL) {
		t.Errorf("the demo source's credentials %s (%v), want them naming the fake's new address %s", creds, err, stripeURL)
	}
	if n := count(t, `SELECT count(*) FROM reconcile_runs r WHERE source_id = $1 AND outcome <> 'ok'`, first.SourceID); n != 0 {
		t.Errorf("%d reconciliation runs of the demo source did not succeed", n)
	}
}
