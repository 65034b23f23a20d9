package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/sluicehq/sluice/ingest/providers/github/githubtest"
	"github.com/sluicehq/sluice/ingest/providers/stripe/stripetest"
	"github.com/sluicehq/sluice/ingest/reconcile"
	"github.com/sluicehq/sluice/ingest/signature"
	"github.com/sluicehq/sluice/internal/testenv"
)

// setAPICredentials stores credentials through the command operators run.
func setAPICredentials(t *testing.T, g *Globals, sourceID, creds string) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "credentials.json")
	if err := os.WriteFile(file, []byte(creds), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := (&SourceSetAPICredentialsCmd{Source: sourceID, Credentials: file}).Run(context.Background(), g); err != nil {
		t.Fatal(err)
	}
}

// Scenario 1 and invariant 10: Stripe recorded paid invoices while the
// endpoint was down. `sluice reconcile --since` enters them through the
// inbox and the outbox; the pipeline grants each once; the webhooks that
// arrive afterwards, rendered with other delivery metadata, are 200
// duplicates and grant nothing more.
func TestReconcileGrantsMissedInvoicesOnceAndLateWebhooksAreDuplicates(t *testing.T) {
	t.Parallel()
	f := newTenant(t)
	ctx := context.Background()
	g := &Globals{DatabaseURL: suite.databaseURL, SecretKey: suite.secretKey, TopicPrefix: suite.topics.Prefix}
	api := stripetest.New(t)
	setAPICredentials(t, g, f.sourceID, fmt.Sprintf(`{"secret_key":"rk_test_%s","api_base":%q}`, testenv.RandomSuffix(), api.URL))

	const invoices = 5
	s := testenv.RandomSuffix()
	evs := make([]stripetest.Event, invoices)
	ids := make([]string, invoices)
	for i := range evs {
		ids[i] = fmt.Sprintf("evt_rec_%s_%d", s, i)
		evs[i] = stripetest.Event{ID: ids[i], Type: "invoice.paid", Created: time.Now().Add(-30 * time.Minute), APIVersion: "2024-06-20",
			Object: map[string]any{"id": fmt.Sprintf("in_rec_%s_%d", s, i), "object": "invoice", "customer": f.customer,
				"amount_paid": 1500, "currency": "usd", "status": "paid"}}
	}
	api.Record(evs...)
	api.Throttle(1) // Stripe's rate limit: 429 with Retry-After, waited out

	run := &ReconcileRunCmd{Source: f.sourceID, Since: time.Now().Add(-2 * time.Hour).UTC().Format(time.RFC3339)}
	if err := run.Run(ctx, g, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	recs := recordsFor(t, suite.topics.Resource("invoices"), invoices, ids...)
	for _, r := range recs {
		if headerMap(r)["sluice_recovered"] != "true" {
			t.Fatalf("record %s lacks the recovered mark", headerMap(r)["ce_id"])
		}
	}
	waitConsumed(t, recs...)
	if n := f.grants(t); n != invoices {
		t.Fatalf("grants = %d, want %d", n, invoices)
	}
	if b := f.balance(t); b != 100*invoices {
		t.Fatalf("balance = %d, want %d", b, 100*invoices)
	}
	runs, err := reconcile.Runs(ctx, suite.pool, f.sourceID, 10)
	if err != nil || len(runs) != 1 || runs[0].Corrected != invoices || runs[0].FinishedAt == nil {
		t.Fatalf("reconcile status: %+v, %v; want one finished run with %d corrections", runs, err, invoices)
	}

	// A second run changes nothing.
	if err := run.Run(ctx, g, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	if n := count(t, `SELECT count(*) FROM reconcile_corrections WHERE source_id = $1`, f.sourceID); n != invoices {
		t.Fatalf("corrections after a second run = %d, want %d", n, invoices)
	}

	for _, e := range evs {
		if status := f.sendSigned(t, e.Body(1)); status != http.StatusOK {
			t.Fatalf("late webhook %s: status %d, want 200 (duplicate of the recovered event)", e.ID, status)
		}
	}
	if n := f.inboxRows(t); n != invoices {
		t.Fatalf("inbox rows = %d, want %d", n, invoices)
	}
	if n := f.outboxRows(t); n != invoices {
		t.Fatalf("outbox rows = %d, want %d", n, invoices)
	}
	if n := f.grants(t); n != invoices {
		t.Fatalf("grants after late webhooks = %d, want %d", n, invoices)
	}
}

// Scenario 3: GitHub never redelivers on its own. Of 20 deliveries of the
// App, 5 failed (the endpoint was down); one run of `sluice reconcile` asks
// GitHub, through its API, to redeliver exactly those 5 (same
// X-GitHub-Delivery), and each redelivery is applied once.
func TestReconcileRedeliversExactlyTheFailedGitHubDeliveries(t *testing.T) {
	t.Parallel()
	gh := newGitHubSource(t)
	ctx := context.Background()
	g := &Globals{DatabaseURL: suite.databaseURL, SecretKey: suite.secretKey, TopicPrefix: suite.topics.Prefix}
	api := githubtest.New(t)
	setAPICredentials(t, g, gh.id, api.Credentials())
	api.Redeliver = func(d githubtest.Delivery) int {
		return postHeaders(t, gh.id, d.Body, map[string]string{
			"X-GitHub-Event": d.Event, "X-GitHub-Delivery": d.GUID, "X-Hub-Signature-256": signature.SignGitHub(gh.secret, d.Body)})
	}

	s := testenv.RandomSuffix()
	var failed, delivered []string
	installations := map[string]int64{}
	for i := range 20 {
		guid := fmt.Sprintf("gh-%s-%d", s, i)
		id := newInstallationID() + int64(i)
		installations[guid] = id
		body := installationExample(t, "created", id)
		d := githubtest.Delivery{GUID: guid, DeliveredAt: time.Now().Add(-time.Hour), Event: "installation", Action: "created", Body: body}
		if i%4 == 0 {
			d.StatusCode = http.StatusBadGateway // the endpoint was down: Sluice never saw it
			failed = append(failed, guid)
		} else {
			d.StatusCode = postHeaders(t, gh.id, body, map[string]string{
				"X-GitHub-Event": "installation", "X-GitHub-Delivery": guid, "X-Hub-Signature-256": signature.SignGitHub(gh.secret, body)})
			delivered = append(delivered, guid)
		}
		api.Record(d)
	}

	run := &ReconcileRunCmd{Source: gh.id, Since: time.Now().Add(-2 * time.Hour).UTC().Format(time.RFC3339)}
	if err := run.Run(ctx, g, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	if got := api.Redelivered(); !slices.Equal(sorted(got), sorted(failed)) {
		t.Fatalf("redelivery asked for %v, want exactly the failed %v", got, failed)
	}
	recs := recordsFor(t, suite.topics.Resource("github"), 20, append(failed, delivered...)...)
	waitGroupPast(t, suite.topics.Resource("installations"), recs...)
	for _, guid := range failed {
		if state, _ := gh.installation(t, installations[guid]); state != "active" {
			t.Fatalf("redelivered installation %s: state %q, want active", guid, state)
		}
	}
	if n := count(t, `SELECT count(*) FROM inbox WHERE source_id = $1`, gh.id); n != 20 {
		t.Fatalf("inbox rows = %d, want 20", n)
	}
	if n := count(t, `SELECT count(*) FROM reconcile_corrections WHERE source_id = $1 AND outcome = 'redelivery_requested'`, gh.id); n != 5 {
		t.Fatalf("redelivery corrections = %d, want 5", n)
	}

	// The redeliveries succeeded: a second run asks for nothing.
	if err := run.Run(ctx, g, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	if got := api.Redelivered(); len(got) != len(failed) {
		t.Fatalf("a second run asked again: %v", got)
	}
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}
