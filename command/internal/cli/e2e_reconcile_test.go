package cli

import (
	"context"
	"encoding/base64"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/ingest/reconcile"
	"github.com/sluicehq/sluice/internal/provider/kinds/github/githubtest"
	"github.com/sluicehq/sluice/internal/provider/kinds/stripe/stripetest"
	"github.com/sluicehq/sluice/internal/provider/signature"
	"github.com/sluicehq/sluice/internal/testenv"
)

// commandGlobals are what a command run against the suite's pipeline needs.
func commandGlobals() *Globals {
	return &Globals{DatabaseURL: suite.databaseURL, SecretKey: suite.secretKey, TopicPrefix: suite.topics.Prefix}
}

// withStripeAPI gives the fixture's Stripe source a fake Stripe API.
func (f tenantFixture) withStripeAPI(t *testing.T, g *Globals) *stripetest.API {
	t.Helper()
	api := stripetest.New(t)
	setAPICredentials(t, g, f.sourceID, fmt.Sprintf(`{"secret_key":"rk_test_%s","api_base":%q}`, testenv.RandomSuffix(), api.URL))
	return api
}

// withAPI gives the source a fake GitHub API for its App.
func (gh githubSource) withAPI(t *testing.T, g *Globals) *githubtest.API {
	t.Helper()
	api := githubtest.New(t)
	setAPICredentials(t, g, gh.id, api.Credentials())
	return api
}

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

// Scenario 1 and invariant 10: Stripe recorded 50 paid invoices while the
// endpoint was down. `sluice reconcile --since` enters them through the
// inbox and the outbox; the pipeline grants each once; the webhooks that
// arrive afterwards, rendered with other delivery metadata, are 200
// duplicates and grant nothing more.
func TestReconcileGrantsMissedInvoicesOnceAndLateWebhooksAreDuplicates(t *testing.T) {
	t.Parallel()
	f := newTenant(t)
	ctx := context.Background()
	g := commandGlobals()
	api := f.withStripeAPI(t, g)

	const invoices = 50
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
	g := commandGlobals()
	api := gh.withAPI(t, g)
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

// standardSource is a Standard Webhooks source of its own tenant whose API
// lookup is a local server answering one object for any id.
type standardSource struct{ id, secret string }

func newStandardSource(t *testing.T, g *Globals, lookup func(id string) string, eventType, statePointer string) standardSource {
	t.Helper()
	f := newTenant(t)
	secret := "whsec_" + base64.StdEncoding.EncodeToString([]byte("0123456789abcdef01234567"+testenv.RandomSuffix()))
	src := standardSource{id: newSource(t, f.tenantID, "standard_webhooks", secret), secret: secret}
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Api-Key") != "platform_key" {
			http.Error(w, "unauthorised", http.StatusUnauthorized)
			return
		}
		fmt.Fprint(w, lookup(path.Base(r.URL.Path)))
	}))
	t.Cleanup(api.Close)
	setAPICredentials(t, g, src.id, fmt.Sprintf(`{"object_url":"%s/v1/objects/{id}","auth_header":"X-Api-Key","auth_value":"platform_key",
		"event_type":%q,"state_pointer":%q,"version_pointer":"/updated_at"}`, api.URL, eventType, statePointer))
	return src
}

// send delivers a signed Standard Webhooks event and returns its id.
func (s standardSource) send(t *testing.T, body []byte) string {
	t.Helper()
	msg := "msg_" + testenv.RandomSuffix()
	now := time.Now()
	if code := postHeaders(t, s.id, body, map[string]string{
		signature.StandardIDHeader: msg, signature.StandardTimestampHeader: fmt.Sprint(now.Unix()),
		signature.StandardSignatureHeader: signature.SignStandard(s.secret, msg, now, body),
	}); code/100 != 2 {
		t.Fatalf("standard webhook: status %d", code)
	}
	return msg
}

// Scenario 5: a verification left pending past the provider's 24 h of
// retries gets its final state from the provider's API through the
// pipeline; a pending that arrives afterwards never reopens it.
func TestReconcileAppliesAStuckVerificationsFinalState(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	g := commandGlobals()
	decided := time.Now().Add(-3 * time.Hour).UTC().Truncate(time.Second)
	src := newStandardSource(t, g, func(id string) string {
		return fmt.Sprintf(`{"id":%q,"status":"approved","updated_at":%q}`, id, decided.Format(time.RFC3339))
	}, "verification.{state}", "/status")
	ver := "ver_" + testenv.RandomSuffix()
	status := func() string {
		var s string
		if err := suite.pool.QueryRow(ctx, `SELECT status FROM verifications WHERE source_id = $1 AND verification_id = $2`, src.id, ver).Scan(&s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	pending := func(at time.Time) []byte {
		return fmt.Appendf(nil, `{"type":"verification.pending","timestamp":%q,"data":{"id":%q}}`, at.Format(time.RFC3339), ver)
	}
	first := src.send(t, pending(time.Now().Add(-30*time.Hour)))
	waitGroupPast(t, suite.topics.Resource("verifications"), recordsFor(t, suite.topics.Resource("verifications"), 1, first)...)

	run := &ReconcileRunCmd{Source: src.id, Since: time.Now().Add(-48 * time.Hour).UTC().Format(time.RFC3339)}
	if err := run.Run(ctx, g, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	var recovered string
	if err := suite.pool.QueryRow(ctx, `SELECT event_id FROM inbox WHERE source_id = $1 AND event_type = 'verification.approved'`, src.id).Scan(&recovered); err != nil {
		t.Fatalf("no recovered verification.approved: %v", err)
	}
	waitGroupPast(t, suite.topics.Resource("verifications"), recordsFor(t, suite.topics.Resource("verifications"), 1, recovered)...)
	if s := status(); s != "approved" {
		t.Fatalf("after reconcile: %s, want approved", s)
	}

	late := src.send(t, pending(time.Now().Add(-time.Hour)))
	waitGroupPast(t, suite.topics.Resource("verifications"), recordsFor(t, suite.topics.Resource("verifications"), 1, late)...)
	if s := status(); s != "approved" {
		t.Fatalf("a late pending reopened the verification: %s", s)
	}
}

// Scenario 4: a feedback whose creation webhook never came (Sluice heard
// only of its escalation) gets its one initial alert from the platform's
// state; a second run adds none.
func TestReconcileGivesFeedbackWithoutItsWebhookOneAlert(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	g := commandGlobals()
	created := time.Now().Add(-2 * time.Hour).UTC().Truncate(time.Second)
	project := "proj_" + testenv.RandomSuffix()
	src := newStandardSource(t, g, func(id string) string {
		return fmt.Sprintf(`{"id":%q,"project_id":%q,"updated_at":%q}`, id, project, created.Format(time.RFC3339))
	}, "feedback.created", "")
	fb := "fb_" + testenv.RandomSuffix()
	escalated := src.send(t, fmt.Appendf(nil, `{"type":"feedback.escalated","timestamp":%q,"data":{"id":%q,"project_id":%q,"level":1}}`,
		time.Now().Add(-time.Hour).UTC().Format(time.RFC3339), fb, project))
	waitGroupPast(t, suite.topics.Resource("feedback"), recordsFor(t, suite.topics.Resource("feedback"), 1, escalated)...)

	run := &ReconcileRunCmd{Source: src.id, Since: time.Now().Add(-24 * time.Hour).UTC().Format(time.RFC3339)}
	for range 2 {
		if err := run.Run(ctx, g, slog.New(slog.DiscardHandler)); err != nil {
			t.Fatal(err)
		}
	}
	if n := count(t, `SELECT count(*) FROM inbox WHERE source_id = $1 AND event_type = 'feedback.created'`, src.id); n != 1 {
		t.Fatalf("recovered feedback.created = %d, want 1 over two runs", n)
	}
	var recovered string
	if err := suite.pool.QueryRow(ctx, `SELECT event_id FROM inbox WHERE source_id = $1 AND event_type = 'feedback.created'`, src.id).Scan(&recovered); err != nil {
		t.Fatal(err)
	}
	waitGroupPast(t, suite.topics.Resource("feedback"), recordsFor(t, suite.topics.Resource("feedback"), 1, recovered)...)
	if n := count(t, `SELECT count(*) FROM feedback_alerts WHERE source_id = $1 AND feedback_id = $2 AND operation = 'initial-alert'`, src.id, fb); n != 1 {
		t.Fatalf("initial alerts = %d, want 1", n)
	}
}

// Scenario 3's tie: a suspend and an unsuspend of one installation with the
// same updated_at; the later arrival (unsuspend) won. GitHub's state says
// suspended: reconciliation fetches the installation and its state decides.
func TestReconcileDecidesAnEqualUpdatedAtTieByGitHubsState(t *testing.T) {
	t.Parallel()
	gh := newGitHubSource(t)
	ctx := context.Background()
	g := commandGlobals()
	api := gh.withAPI(t, g)
	id := newInstallationID()
	at := time.Now().Add(-time.Hour).UTC().Truncate(time.Second)
	api.SetInstallation(githubtest.Installation{ID: id, Suspended: true, UpdatedAt: at, AccountID: 42, AccountName: "octo"})

	s := testenv.RandomSuffix()
	for i, action := range []string{"suspend", "unsuspend"} {
		body := fmt.Appendf(nil, `{"action":%q,"installation":{"id":%d,"account":{"id":42,"login":"octo","type":"Organization"},"updated_at":%q},"sender":{"login":"octocat"}}`,
			action, id, at.Format(time.RFC3339))
		gh.send(t, fmt.Sprintf("tie-%s-%d", s, i), body)
	}
	if state, _ := gh.installation(t, id); state != "active" {
		t.Fatalf("before reconcile: %s, want active (the later arrival of the tie)", state)
	}

	run := &ReconcileRunCmd{Source: gh.id, Since: time.Now().Add(-2 * time.Hour).UTC().Format(time.RFC3339)}
	if err := run.Run(ctx, g, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	var fetched string
	if err := suite.pool.QueryRow(ctx, `SELECT event_id FROM inbox WHERE source_id = $1 AND event_id LIKE 'sluice-reconcile-%'`, gh.id).Scan(&fetched); err != nil {
		t.Fatalf("no fetched installation state entered: %v", err)
	}
	waitGroupPast(t, suite.topics.Resource("installations"), recordsFor(t, suite.topics.Resource("github"), 1, fetched)...)
	if state, version := gh.installation(t, id); state != "suspended" || !version.Equal(at) {
		t.Fatalf("after reconcile: %s at %s, want suspended at %s (GitHub's state)", state, version, at)
	}
	// The tie is still in the inbox; fetching the same state again enters nothing.
	if err := run.Run(ctx, g, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	if n := count(t, `SELECT count(*) FROM inbox WHERE source_id = $1`, gh.id); n != 3 {
		t.Fatalf("inbox rows = %d, want 3", n)
	}
}

// A refund in Stripe's basil shape names its payment intent, not its
// invoice; when the invoice_payment.paid that links them never came, the
// refund waits. Reconciliation asks Stripe for the payment intent's invoice
// payment and enters it: the link releases the refund, which reverses the
// grant once.
func TestReconcileResolvesARefundWaitingForItsInvoice(t *testing.T) {
	t.Parallel()
	f := newTenant(t)
	ctx := context.Background()
	g := commandGlobals()
	api := f.withStripeAPI(t, g)
	s := testenv.RandomSuffix()
	inv, pi := "in_w"+s, "pi_w"+s
	api.RecordInvoicePayment(stripetest.InvoicePayment{ID: "inpay_w" + s, Invoice: inv, PaymentIntent: pi, Charge: "ch_" + pi,
		AmountPaid: 1000, PaidAt: time.Now().Add(-time.Hour)})

	paid, refund := "evt_paid_w"+s, "evt_refund_w"+s
	for _, step := range []struct{ name, id string }{{"invoice.paid", paid}, {"charge.refunded", refund}} {
		if code := f.sendSigned(t, f.stripeExample(t, step.name, step.id, inv, pi)); code != http.StatusAccepted {
			t.Fatalf("%s: status %d", step.name, code)
		}
	}
	refundID := refund + "_3RChargeRefundedExample"
	if n := count(t, `SELECT count(*) FROM inbox WHERE source_id = $1 AND event_id = $2 AND status = 'waiting'`, f.sourceID, refundID); n != 1 {
		t.Fatalf("refund before reconcile: %d waiting rows, want 1", n)
	}

	run := &ReconcileRunCmd{Source: f.sourceID, Since: time.Now().Add(-2 * time.Hour).UTC().Format(time.RFC3339)}
	if err := run.Run(ctx, g, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	recs := recordsFor(t, suite.topics.Resource("invoices"), 2, paid+"_1RInvoicePaidExample", refundID)
	waitConsumed(t, recs...)
	if n := count(t, `SELECT count(*) FROM inbox WHERE source_id = $1 AND event_id = $2 AND status = 'published' AND object_id = $3`,
		f.sourceID, refundID, inv); n != 1 {
		t.Fatalf("refund after reconcile: not published for %s", inv)
	}
	if n := count(t, `SELECT count(*) FROM credit_reversals WHERE tenant_id = $1 AND object_id = $2`, f.tenantID, inv); n != 1 {
		t.Fatalf("reversals = %d, want 1", n)
	}
	if b := f.balance(t); b != 0 {
		t.Fatalf("balance = %d, want 0", b)
	}
}

// Reconciling a source whose kind has no provider API says so before any
// run is recorded: the api source's events come from the tenant itself
// (POST /v1/events), so there is nothing to ask and no failed run to show.
func TestReconcilingAnAPISourceSaysThereIsNoProviderToAsk(t *testing.T) {
	t.Parallel()
	f := newTenant(t)
	if _, stderr, code := cli(t, "apikey", "create", "--tenant", f.tenantID); code != 0 {
		t.Fatalf("apikey create: %s", stderr)
	}
	var source string
	if err := suite.pool.QueryRow(t.Context(), `SELECT id::text FROM sources WHERE tenant_id = $1 AND kind = 'api'`, f.tenantID).Scan(&source); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := cli(t, "reconcile", "--source", source)
	if code != 1 || !strings.Contains(stderr, "api source") || !strings.Contains(stderr, "/v1/events") || !strings.Contains(stderr, "stripe") {
		t.Errorf("reconcile --source <api source>: exit %d, %q; want why there is no provider to ask", code, stderr)
	}
	if n := count(t, `SELECT count(*) FROM reconcile_runs WHERE source_id = $1`, source); n != 0 {
		t.Errorf("reconcile runs of the api source: %d, want none", n)
	}
}
