package cli

// Providers' payloads as they are sent today (issue 11): each test sends the
// provider's own published example, or a payload in the shape its official
// library describes, through the whole pipeline to the effect.

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicehq/sluice/internal/envelope"
	"github.com/sluicehq/sluice/internal/provider/signature"
	"github.com/sluicehq/sluice/internal/testenv"
	"github.com/sluicehq/sluice/internal/testenv/examples"
)

// githubSource is a GitHub App source of its own tenant.
type githubSource struct{ id, secret string }

func newGitHubSource(t *testing.T) githubSource {
	t.Helper()
	f := newTenant(t)
	secret := "gh_" + testenv.RandomSuffix()
	return githubSource{id: newSource(t, f.tenantID, "github", secret), secret: secret}
}

// installationExample is GitHub's example payload for action, about
// installation id instead of the example's.
func installationExample(t *testing.T, action string, id int64) []byte {
	t.Helper()
	var doc map[string]any
	dec := json.NewDecoder(bytes.NewReader(examples.Payload("github", "installation."+action)))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	doc["installation"].(map[string]any)["id"] = id
	body, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return body
}

// send posts a signed installation event and returns the delivery's Kafka
// record once the installations group applied it.
func (g githubSource) send(t *testing.T, delivery string, body []byte) *kgo.Record {
	t.Helper()
	if code := postHeaders(t, g.id, body, map[string]string{
		"X-GitHub-Event": "installation", "X-GitHub-Delivery": delivery, "X-Hub-Signature-256": signature.SignGitHub(g.secret, body),
	}); code/100 != 2 {
		t.Fatalf("delivery %s: status %d", delivery, code)
	}
	recs := recordsFor(t, suite.topics.Resource("github"), 1, delivery)
	waitGroupPast(t, suite.topics.Resource("installations"), recs...)
	return recs[0]
}

func (g githubSource) installation(t *testing.T, id int64) (state string, version time.Time) {
	t.Helper()
	if err := suite.pool.QueryRow(context.Background(), `SELECT state, version_time FROM github_installations
		WHERE source_id = $1 AND installation_id = $2`, g.id, fmt.Sprint(id)).Scan(&state, &version); err != nil {
		t.Fatalf("installation %d: %v", id, err)
	}
	return state, version.UTC()
}

func newInstallationID() int64 { return time.Now().UnixNano()%1e12 + 1 }

// Case 1: GitHub's own created and deleted examples carry updated_at in
// unix seconds; both are published and projected (they were quarantined:
// "got number, want string"). Case 5: a quarantine reason names what
// failed, never a path of the server.
func TestGitHubInstallationExamplesWithUnixTimesProject(t *testing.T) {
	t.Parallel()
	gh := newGitHubSource(t)
	id := newInstallationID()
	s := testenv.RandomSuffix()

	rec := gh.send(t, "created-"+s, installationExample(t, "created", id))
	if got := headerMap(rec)[envelope.HeaderTime]; got != "2019-05-15T15:19:51Z" {
		t.Errorf("ce_time = %q, want updated_at 1557933591 as RFC 3339", got)
	}
	if state, at := gh.installation(t, id); state != "active" || !at.Equal(time.Unix(1557933591, 0)) {
		t.Errorf("after created: %s at %s, want active at 1557933591", state, at)
	}
	gh.send(t, "deleted-"+s, installationExample(t, "deleted", id))
	if state, _ := gh.installation(t, id); state != "deleted" {
		t.Errorf("after deleted: %s, want deleted", state)
	}

	// An event that fails its schema is still quarantined, with a reason
	// that says why and nothing of the server's file system.
	bad := bytes.Replace(installationExample(t, "created", id+1), []byte(`"updated_at":1557933591`), []byte(`"updated_at":true`), 1)
	if code := postHeaders(t, gh.id, bad, map[string]string{
		"X-GitHub-Event": "installation", "X-GitHub-Delivery": "bad-" + s, "X-Hub-Signature-256": signature.SignGitHub(gh.secret, bad),
	}); code != 202 {
		t.Fatalf("bad delivery: status %d", code)
	}
	var status, reason string
	if err := suite.pool.QueryRow(context.Background(), `SELECT status, reason FROM inbox WHERE source_id = $1 AND event_id = $2`,
		gh.id, "bad-"+s).Scan(&status, &reason); err != nil {
		t.Fatal(err)
	}
	if status != "quarantined" || !strings.Contains(reason, "/installation/updated_at") {
		t.Errorf("bad delivery: %s (%s), want quarantined about /installation/updated_at", status, reason)
	}
	if strings.Contains(reason, "file:") || strings.Contains(reason, "/schemas/") {
		t.Errorf("quarantine reason names a schema location: %s", reason)
	}
}

// Case 4: GitHub's own suspend and unsuspend examples share one updated_at.
// Sent created, suspend, unsuspend, each after the previous one was applied,
// the installation ends active: the tie goes to the event Sluice accepted
// last, not to the greater delivery id (here the suspend's).
func TestInstallationTieGoesToTheEventAcceptedLast(t *testing.T) {
	t.Parallel()
	gh := newGitHubSource(t)
	id := newInstallationID()
	s := testenv.RandomSuffix()
	gh.send(t, "00000000-"+s+"-created", installationExample(t, "created", id))
	gh.send(t, "ffffffff-"+s+"-suspend", installationExample(t, "suspend", id))
	if state, _ := gh.installation(t, id); state != "suspended" {
		t.Fatalf("after suspend: %s, want suspended", state)
	}
	gh.send(t, "11111111-"+s+"-unsuspend", installationExample(t, "unsuspend", id))
	state, at := gh.installation(t, id)
	if state != "active" || !at.Equal(time.Date(2021, 4, 29, 2, 32, 50, 0, time.UTC)) {
		t.Errorf("after unsuspend: %s at %s, want active at the shared updated_at", state, at)
	}
}

// stripeExample is a Stripe example with the test's own ids in place of
// the example's.
func (f tenantFixture) stripeExample(t *testing.T, name, eventID, invoice, intent string) []byte {
	t.Helper()
	return examples.Payload("stripe", name,
		examples.StripeInvoice, invoice, examples.StripeCustomer, f.customer,
		examples.StripePaymentIntent, intent, examples.StripeCharge, "ch_"+intent,
		`"id": "evt_`, `"id": "`+eventID+`_`)
}

// Case 2: refunds in Stripe's current API shape (2025-03-31 basil on: the
// charge names no invoice) reach their invoice's grant, through the payment
// intent that invoice_payment.paid links to it: paid then refunded ends with
// the grant reversed once; refunded first (the refund waits, visibly, until
// the link arrives) ends with no grant at all.
func TestBasilRefundsReachTheirInvoice(t *testing.T) {
	t.Parallel()
	f := newTenant(t)
	s := testenv.RandomSuffix()

	// Paid, linked, refunded.
	inv1, pi1 := "in_a"+s, "pi_a"+s
	for _, step := range []struct{ name, id string }{
		{"invoice.paid", "evt_paid_a" + s}, {"invoice_payment.paid", "evt_pay_a" + s}, {"charge.refunded", "evt_refund_a" + s},
	} {
		if code := f.sendSigned(t, f.stripeExample(t, step.name, step.id, inv1, pi1)); code != 202 {
			t.Fatalf("%s: status %d", step.name, code)
		}
	}
	recs := recordsFor(t, suite.topics.Resource("invoices"), 3, "evt_paid_a"+s+"_1RInvoicePaidExample",
		"evt_pay_a"+s+"_1RInvoicePaymentPaidExample", "evt_refund_a"+s+"_3RChargeRefundedExample")
	key := envelope.Key(f.tenantID, "invoice", inv1)
	for _, r := range recs {
		h := headerMap(r)
		if string(r.Key) != key || h[envelope.HeaderSubject] != inv1 || h[envelope.HeaderAPIVersion] != "2025-03-31.basil" {
			t.Errorf("%s: key %s subject %s api version %q, want %s, %s, 2025-03-31.basil", h[envelope.HeaderID], r.Key,
				h[envelope.HeaderSubject], h[envelope.HeaderAPIVersion], key, inv1)
		}
	}
	waitConsumed(t, recs...)
	if n := count(t, `SELECT count(*) FROM credit_reversals WHERE tenant_id = $1 AND object_id = $2 AND credits = 100`, f.tenantID, inv1); n != 1 {
		t.Errorf("paid then refunded: reversals of 100 = %d, want 1", n)
	}

	// Refunded first: kept waiting, published once invoice_payment.paid
	// links its payment intent, before the invoice.paid, which then grants
	// nothing.
	inv2, pi2 := "in_b"+s, "pi_b"+s
	refund := "evt_refund_b" + s
	if code := f.sendSigned(t, f.stripeExample(t, "charge.refunded", refund, inv2, pi2)); code != 202 {
		t.Fatalf("refund: status %d", code)
	}
	refundID := refund + "_3RChargeRefundedExample"
	if n := count(t, `SELECT count(*) FROM inbox i JOIN inbox_waiting w ON w.inbox_id = i.id
		WHERE i.source_id = $1 AND i.event_id = $2 AND i.status = 'waiting'`, f.sourceID, refundID); n != 1 {
		t.Fatalf("refund before its link: %d waiting rows, want 1", n)
	}
	if n := count(t, `SELECT count(*) FROM outbox WHERE headers->>'ce_id' = $1`, refundID); n != 0 {
		t.Fatalf("refund before its link: %d outbox rows, want 0", n)
	}
	for _, step := range []struct{ name, id string }{{"invoice_payment.paid", "evt_pay_b" + s}, {"invoice.paid", "evt_paid_b" + s}} {
		if code := f.sendSigned(t, f.stripeExample(t, step.name, step.id, inv2, pi2)); code != 202 {
			t.Fatalf("%s: status %d", step.name, code)
		}
	}
	recs = recordsFor(t, suite.topics.Resource("invoices"), 3, refundID, "evt_pay_b"+s+"_1RInvoicePaymentPaidExample",
		"evt_paid_b"+s+"_1RInvoicePaidExample")
	waitConsumed(t, recs...)
	if n := count(t, `SELECT count(*) FROM inbox WHERE source_id = $1 AND event_id = $2 AND status = 'published' AND object_id = $3`,
		f.sourceID, refundID, inv2); n != 1 {
		t.Errorf("refund after its link: not published for %s", inv2)
	}
	if n := count(t, `SELECT count(*) FROM credit_grants WHERE tenant_id = $1 AND object_id = $2`, f.tenantID, inv2); n != 0 {
		t.Errorf("refunded first: %d grants, want 0", n)
	}
	if n := f.grants(t); n != 1 {
		t.Errorf("grants = %d, want 1 (the first invoice's)", n)
	}
	if b := f.balance(t); b != 0 {
		t.Errorf("balance = %d, want 0", b)
	}
}

// Case 3: a Standard Webhooks secret enters the same way whether a source
// is created or its secret rotated: unpadded base64 is accepted (as the
// reference libraries do) and verifies deliveries; what is not base64 is
// refused by both with the same message, and the refused rotation leaves
// the source working.
func TestStandardSecretsAreValidatedAlikeOnCreateAndRotate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newTenant(t)
	g := &Globals{DatabaseURL: suite.databaseURL, SecretKey: suite.secretKey}
	key := make([]byte, 32) // base64 of 32 bytes ends in one "=": unpadded is one shorter
	_, _ = rand.Read(key)
	unpadded := "whsec_" + base64.RawStdEncoding.EncodeToString(key)
	account := "std_" + testenv.RandomSuffix()
	if err := (&SourceCreateCmd{Tenant: f.tenantID, Kind: "standard_webhooks", Account: account, Secret: unpadded}).Run(ctx, g); err != nil {
		t.Fatalf("source create with an unpadded secret: %v", err)
	}
	var sourceID string
	if err := suite.pool.QueryRow(ctx, `SELECT id::text FROM sources WHERE tenant_id = $1 AND account = $2`, f.tenantID, account).Scan(&sourceID); err != nil {
		t.Fatal(err)
	}

	// A delivery signed with the same key, written padded, verifies.
	padded := "whsec_" + base64.StdEncoding.EncodeToString(key)
	deliver := func(id string) int {
		body := fmt.Appendf(nil, `{"type":"sluice.test","data":{"id":%q}}`, id)
		now := time.Now()
		return postHeaders(t, sourceID, body, map[string]string{
			signature.StandardIDHeader: id, signature.StandardTimestampHeader: fmt.Sprint(now.Unix()),
			signature.StandardSignatureHeader: signature.SignStandard(padded, id, now, body),
		})
	}
	if code := deliver("msg_1_" + testenv.RandomSuffix()); code/100 != 2 {
		t.Fatalf("delivery signed with the unpadded secret's key: status %d", code)
	}

	bad := "whsec_this is not base64!"
	createErr := (&SourceCreateCmd{Tenant: f.tenantID, Kind: "standard_webhooks", Account: "std_" + testenv.RandomSuffix(), Secret: bad}).Run(ctx, g)
	rotateErr := (&SourceRotateSecretCmd{Source: sourceID, Secret: bad, Overlap: 0}).Run(ctx, g)
	if createErr == nil || rotateErr == nil || createErr.Error() != rotateErr.Error() {
		t.Fatalf("create: %v; rotate-secret: %v; want the same refusal from both", createErr, rotateErr)
	}
	if n := count(t, `SELECT count(*) FROM source_secrets WHERE source_id = $1 AND (expires_at IS NULL OR expires_at > now())`, sourceID); n != 1 {
		t.Errorf("active secrets after the refused rotation = %d, want 1", n)
	}
	if code := deliver("msg_2_" + testenv.RandomSuffix()); code/100 != 2 {
		t.Errorf("delivery after the refused rotation: status %d", code)
	}
}
