package cli

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicehq/sluice/internal/consumers/consumertest"
	"github.com/sluicehq/sluice/internal/envelope"
	"github.com/sluicehq/sluice/internal/provider/signature"
	"github.com/sluicehq/sluice/internal/store/tenancy"
	"github.com/sluicehq/sluice/internal/testenv"
)

// Scenario 2 end to end: `active` then `canceled` delivered in reverse
// order (the cancellation first) ends canceled, through ingest, the relay
// and the subscriptions group.
func TestSubscriptionCanceledThenLateActiveEndsCanceled(t *testing.T) {
	t.Parallel()
	f := newTenant(t)
	s := testenv.RandomSuffix()
	sub := "sub_" + s
	at := time.Now().Add(-time.Minute).Unix()
	event := func(id, typ, status string, created int64) []byte {
		return fmt.Appendf(nil, `{"id":%q,"object":"event","type":%q,"created":%d,"data":{"object":{"id":%q,"object":"subscription","customer":%q,"status":%q}}}`,
			id, typ, created, sub, f.customer, status)
	}
	canceled, active := "evt_cancel_"+s, "evt_active_"+s
	for _, body := range [][]byte{
		event(canceled, "customer.subscription.deleted", "canceled", at+10),
		event(active, "customer.subscription.updated", "active", at),
	} {
		if code := f.sendSigned(t, body); code/100 != 2 {
			t.Fatalf("status %d", code)
		}
	}
	recs := recordsFor(t, suite.topics.Resource("subscriptions"), 2, canceled, active)
	waitGroupPast(t, suite.topics.Resource("subscriptions"), recs...)
	var status, version string
	if err := suite.pool.QueryRow(context.Background(), `SELECT status, version_event_id FROM subscriptions WHERE source_id = $1 AND subscription_id = $2`,
		f.sourceID, sub).Scan(&status, &version); err != nil {
		t.Fatal(err)
	}
	if status != "canceled" || version != canceled {
		t.Errorf("subscription %s from %s, want canceled from %s", status, version, canceled)
	}
}

// Scenario 1's refund end to end: charge.refunded is routed to the invoice
// it refunds (same key, same partition, after the payment), and reverses
// the grant once, even when delivered again under another event id.
func TestRefundFollowsItsInvoiceAndReversesOnce(t *testing.T) {
	t.Parallel()
	f := newTenant(t)
	s := testenv.RandomSuffix()
	invoice := "in_" + s
	paid, refund, refundAgain := "evt_paid_"+s, "evt_refund_"+s, "evt_refund2_"+s
	refunded := func(id string) []byte {
		return fmt.Appendf(nil, `{"id":%q,"object":"event","type":"charge.refunded","created":%d,"data":{"object":{"id":"ch_%s","object":"charge","invoice":%q,"customer":%q,"amount_refunded":1000,"refunded":true}}}`,
			id, time.Now().Unix(), s, invoice, f.customer)
	}
	for _, body := range [][]byte{invoicePaid(paid, invoice, f.customer, 1000), refunded(refund), refunded(refundAgain)} {
		if code := f.sendSigned(t, body); code/100 != 2 {
			t.Fatalf("status %d", code)
		}
	}
	recs := recordsFor(t, suite.topics.Resource("invoices"), 3, paid, refund, refundAgain)
	key := envelope.Key(f.tenantID, "invoice", invoice)
	for _, r := range recs {
		if string(r.Key) != key || r.Partition != recs[0].Partition {
			t.Errorf("%s: key %s partition %d, want %s on partition %d", headerMap(r)[envelope.HeaderID], r.Key, r.Partition, key, recs[0].Partition)
		}
	}
	waitConsumed(t, recs...)
	if b := f.balance(t); b != 0 {
		t.Errorf("balance = %d, want 0", b)
	}
	if n := count(t, `SELECT count(*) FROM credit_reversals WHERE tenant_id = $1 AND object_id = $2 AND credits = 100`, f.tenantID, invoice); n != 1 {
		t.Errorf("reversals = %d, want 1", n)
	}
}

// waitGroupPast waits until group committed past every record.
func waitGroupPast(t *testing.T, group string, recs ...*kgo.Record) {
	t.Helper()
	adm := kadmClient(t)
	testenv.Eventually(t, time.Minute, group+" to commit past the records", func() (bool, error) {
		return consumertest.CommittedPast(adm, group, recs...)
	})
}

// postHeaders sends body to a source with the given headers.
func postHeaders(t *testing.T, sourceID string, body []byte, headers map[string]string) int {
	t.Helper()
	return postTo(t, suite.baseURL, sourceID, body, headers)
}

// postTo sends a webhook to the ingest URL of sourceID at baseURL.
func postTo(t *testing.T, baseURL, sourceID string, body []byte, headers map[string]string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, baseURL+"/v1/ingest/"+sourceID, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

func newSource(t *testing.T, tenantID, kind, secret string) string {
	t.Helper()
	id, err := suite.store.CreateSource(context.Background(), tenancy.NewSource{TenantID: tenantID, Kind: kind, Account: kind + "_" + testenv.RandomSuffix(), Secret: secret})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// Scenarios 3 and 5 end to end, in reverse order: a GitHub installation
// suspended, then its creation arriving late, ends suspended; an identity
// verification approved, then a late "pending", ends approved. GitHub
// signs no time: the installation's updated_at orders it.
func TestInstallationAndVerificationDeliveredInReverseEndInTheNewestState(t *testing.T) {
	t.Parallel()
	f := newTenant(t)
	s := testenv.RandomSuffix()
	ghSecret := "gh_" + s
	github := newSource(t, f.tenantID, "github", ghSecret)
	stdSecret := "whsec_" + base64.StdEncoding.EncodeToString([]byte("0123456789abcdef01234567"+s))
	standard := newSource(t, f.tenantID, "standard_webhooks", stdSecret)
	base := time.Now().Add(-time.Minute).UTC().Truncate(time.Second)

	installation := time.Now().UnixNano() % 1e9
	var ids []string
	for i, step := range []struct {
		action string
		at     time.Time
	}{{"suspend", base.Add(time.Second)}, {"created", base}} {
		body := fmt.Appendf(nil, `{"action":%q,"installation":{"id":%d,"account":{"id":42,"login":"octo","type":"Organization"},"updated_at":%q},"sender":{"login":"octocat"}}`,
			step.action, installation, step.at.Format(time.RFC3339))
		delivery := fmt.Sprintf("%s-%d", s, i)
		ids = append(ids, delivery)
		if code := postHeaders(t, github, body, map[string]string{
			"X-GitHub-Event": "installation", "X-GitHub-Delivery": delivery, "X-Hub-Signature-256": signature.SignGitHub(ghSecret, body),
		}); code/100 != 2 {
			t.Fatalf("github %s: status %d", step.action, code)
		}
	}
	verification := "ver_" + s
	for i, step := range []struct {
		status string
		at     time.Time
	}{{"approved", base.Add(time.Second)}, {"pending", base.Add(2 * time.Second)}} {
		typ := "verification." + step.status
		body := fmt.Appendf(nil, `{"type":%q,"timestamp":%q,"data":{"id":%q}}`, typ, step.at.Format(time.RFC3339), verification)
		msg := fmt.Sprintf("msg_%s_%d", s, i)
		ids = append(ids, msg)
		now := time.Now()
		if code := postHeaders(t, standard, body, map[string]string{
			signature.StandardIDHeader: msg, signature.StandardTimestampHeader: fmt.Sprint(now.Unix()),
			signature.StandardSignatureHeader: signature.SignStandard(stdSecret, msg, now, body),
		}); code/100 != 2 {
			t.Fatalf("verification %s: status %d", step.status, code)
		}
	}
	waitGroupPast(t, suite.topics.Resource("installations"), recordsFor(t, suite.topics.Resource("github"), 2, ids[:2]...)...)
	waitGroupPast(t, suite.topics.Resource("verifications"), recordsFor(t, suite.topics.Resource("verifications"), 2, ids[2:]...)...)

	var state, status string
	if err := suite.pool.QueryRow(context.Background(), `SELECT state FROM github_installations WHERE source_id = $1 AND installation_id = $2`,
		github, fmt.Sprint(installation)).Scan(&state); err != nil {
		t.Fatal(err)
	}
	if state != "suspended" {
		t.Errorf("installation %s, want suspended", state)
	}
	if err := suite.pool.QueryRow(context.Background(), `SELECT status FROM verifications WHERE source_id = $1 AND verification_id = $2`,
		standard, verification).Scan(&status); err != nil {
		t.Fatal(err)
	}
	if status != "approved" {
		t.Errorf("verification %s, want approved", status)
	}
}
