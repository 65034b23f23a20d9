package ingest_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	svix "github.com/svix/svix-webhooks/go"

	"github.com/sluicehq/sluice/internal/ingest"
	"github.com/sluicehq/sluice/internal/provider/kinds/hmac"
	"github.com/sluicehq/sluice/internal/provider/signature"
	"github.com/sluicehq/sluice/internal/store/tenancy"
)

// stored is the inbox row of one event.
type stored struct {
	tenantID, eventType, objectID, status string
	eventTime                             *time.Time
}

func (b *bundle) stored(t *testing.T, sourceID, eventID string) stored {
	t.Helper()
	var s stored
	err := b.pool.QueryRow(context.Background(), `SELECT tenant_id::text, event_type, object_id, status, event_time
FROM inbox WHERE source_id = $1 AND event_id = $2`, sourceID, eventID).Scan(&s.tenantID, &s.eventType, &s.objectID, &s.status, &s.eventTime)
	if err != nil {
		t.Fatalf("inbox row for %s: %v", eventID, err)
	}
	return s
}

// assertPublished checks the outbox row of an event: resource key, type and
// provider time, as the catalogue contract says.
func (b *bundle) assertPublished(t *testing.T, sourceID, eventID, key, ceType, ceTime string) {
	t.Helper()
	var gotKey []byte
	var headers map[string]string
	err := b.pool.QueryRow(context.Background(), `SELECT o.key, o.headers FROM outbox o JOIN inbox i ON i.id = o.inbox_id
WHERE i.source_id = $1 AND i.event_id = $2`, sourceID, eventID).Scan(&gotKey, &headers)
	if err != nil {
		t.Fatalf("outbox row for %s: %v", eventID, err)
	}
	if string(gotKey) != key || headers["ce_type"] != ceType || headers["ce_time"] != ceTime || headers["ce_id"] != eventID {
		t.Fatalf("outbox key %s headers %v, want key %s type %s time %s", gotKey, headers, key, ceType, ceTime)
	}
}

// githubInstallation makes a GitHub source and a signed installation.created
// delivery of installation id for it: the source, the body and the headers.
func (b *bundle) githubInstallation(t *testing.T, delivery string, id int) (src string, body []byte, h http.Header) {
	t.Helper()
	secret := "gh-" + b.secret
	src = b.newSource(t, tenancy.NewSource{TenantID: b.tenantID, Kind: "github", Secret: secret})
	body = []byte(`{"action":"created","installation":{"id":` + strconv.Itoa(id) + `,"account":{"id":7,"login":"octo"},"updated_at":"2026-05-06T07:08:09Z"}}`)
	return src, body, http.Header{
		"X-Hub-Signature-256": {signature.SignGitHub(secret, body)},
		"X-Github-Delivery":   {delivery},
		"X-Github-Event":      {"installation"},
	}
}

func TestGitHubDeliveryIsKeyedByDeliveryIDAndTypedByEventAndAction(t *testing.T) {
	t.Parallel()
	b := setup(t, ingest.Config{})
	src, body, h := b.githubInstallation(t, "72d3162e-cc78-11e3-81ab-4c9367dc0958", 4242)
	if status, answer := b.post(t, "/v1/ingest/"+src, body, h); status != http.StatusAccepted {
		t.Fatalf("status %d: %s", status, answer)
	}
	// A redelivery keeps X-GitHub-Delivery: a duplicate, not a new event.
	if status, _ := b.post(t, "/v1/ingest/"+src, body, h); status != http.StatusOK {
		t.Fatalf("redelivery: status %d, want 200", status)
	}
	got := b.stored(t, src, "72d3162e-cc78-11e3-81ab-4c9367dc0958")
	if got.eventType != "installation.created" || got.tenantID != b.tenantID || got.status != "published" || got.objectID != "4242" {
		t.Fatalf("stored %+v", got)
	}
	b.assertPublished(t, src, "72d3162e-cc78-11e3-81ab-4c9367dc0958", b.tenantID+"/installation/4242", "github.installation.created", "2026-05-06T07:08:09Z")
	if n := b.count(t, `SELECT count(*) FROM delivery_log WHERE tenant_id = $1`); n != 2 {
		t.Fatalf("delivery attempts = %d, want 2 (the duplicate included)", n)
	}
}

func TestStandardWebhooksSignedBySvixIsStoredWithItsEventTime(t *testing.T) {
	t.Parallel()
	b := setup(t, ingest.Config{})
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	secret := "whsec_" + base64.StdEncoding.EncodeToString(key)
	src := b.newSource(t, tenancy.NewSource{TenantID: b.tenantID, Kind: "standard_webhooks", Secret: secret})
	body := []byte(`{"type":"verification.approved","timestamp":"2026-03-04T05:06:07Z","data":{"id":"ver_9","status":"approved"}}`)
	wh, err := svix.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	sig, _ := wh.Sign("msg_9", now, body)
	h := http.Header{"Webhook-Id": {"msg_9"}, "Webhook-Timestamp": {strconv.FormatInt(now.Unix(), 10)}, "Webhook-Signature": {sig}}
	if status, answer := b.post(t, "/v1/ingest/"+src, body, h); status != http.StatusAccepted {
		t.Fatalf("status %d: %s", status, answer)
	}
	got := b.stored(t, src, "msg_9")
	if got.eventType != "verification.approved" || got.status != "published" || got.eventTime == nil || !got.eventTime.Equal(time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)) {
		t.Fatalf("stored %+v (time %v)", got, got.eventTime)
	}
	b.assertPublished(t, src, "msg_9", b.tenantID+"/verification/ver_9", "standard_webhooks.verification.approved", "2026-03-04T05:06:07Z")
}

func TestGenericHMACSourceReadsConfiguredLocators(t *testing.T) {
	t.Parallel()
	b := setup(t, ingest.Config{})
	settings := hmac.Settings{
		HMACConfig: signature.HMACConfig{Header: "X-Acme-Signature", Algorithm: "sha512", Encoding: "base64", TimestampHeader: "X-Acme-Time"},
		EventID:    "header:X-Acme-Event", EventType: "/event", ObjectID: "/thing/id", EventTime: "/at",
	}
	raw, _ := json.Marshal(settings)
	src := b.newSource(t, tenancy.NewSource{TenantID: b.tenantID, Kind: "hmac", Secret: "acme-secret", Settings: raw})
	body := []byte(`{"event":"thing.made","at":1700000000,"thing":{"id":"t_1"}}`)
	v, _ := signature.NewHMAC(settings.HMACConfig, 0)
	h := v.Sign("acme-secret", body, time.Now())
	h.Set("X-Acme-Event", "ae_1")
	if status, answer := b.post(t, "/v1/ingest/"+src, body, h); status != http.StatusAccepted {
		t.Fatalf("status %d: %s", status, answer)
	}
	got := b.stored(t, src, "ae_1")
	if got.eventType != "thing.made" || got.objectID != "t_1" || got.eventTime == nil || got.eventTime.Unix() != 1700000000 {
		t.Fatalf("stored %+v", got)
	}
	bad := v.Sign("another-secret", body, time.Now())
	bad.Set("X-Acme-Event", "ae_2")
	if status, _ := b.post(t, "/v1/ingest/"+src, body, bad); status != http.StatusUnauthorized {
		t.Fatalf("wrong secret: status %d, want 401", status)
	}
}

// A refund shares its invoice's resource key (the catalogue points at
// data.object.invoice), so it lands on the invoice's partition, in order.
func TestStripeRefundIsKeyedByTheInvoiceItRefunds(t *testing.T) {
	t.Parallel()
	b := setup(t, ingest.Config{})
	refund := event("evt_refund", "charge.refunded", `{"id":"ch_1","object":"charge","invoice":"in_77","amount_refunded":100}`)
	if got := b.send(t, refund, nil); got != http.StatusAccepted {
		t.Fatalf("status %d", got)
	}
	got := b.stored(t, b.sourceID, "evt_refund")
	if got.status != "published" || got.objectID != "in_77" {
		t.Fatalf("stored %+v", got)
	}
	var key []byte
	if err := b.pool.QueryRow(context.Background(), `SELECT o.key FROM outbox o JOIN inbox i ON i.id = o.inbox_id WHERE i.source_id = $1 AND i.event_id = 'evt_refund'`, b.sourceID).Scan(&key); err != nil {
		t.Fatal(err)
	}
	if string(key) != b.tenantID+"/invoice/in_77" {
		t.Fatalf("key %s, want the invoice's", key)
	}
}

// GitHub sends up to 25 MB and never redelivers on its own, so a GitHub
// source takes bodies past the instance default (1 MiB) unless told otherwise.
func TestGitHubSourceAcceptsBodiesPastTheDefaultLimit(t *testing.T) {
	t.Parallel()
	b := setup(t, ingest.Config{MaxBodyBytes: 1 << 20})
	src := b.newSource(t, tenancy.NewSource{TenantID: b.tenantID, Kind: "github", Secret: "gh-big"})
	body := []byte(`{"zen":"` + strings.Repeat("z", 2<<20) + `"}`)
	h := http.Header{"X-Hub-Signature-256": {signature.SignGitHub("gh-big", body)}, "X-Github-Delivery": {"big-1"}, "X-Github-Event": {"ping"}}
	if status, answer := b.post(t, "/v1/ingest/"+src, body, h); status != http.StatusAccepted {
		t.Fatalf("2 MiB GitHub delivery: status %d: %s", status, answer)
	}
	if status, _ := b.post(t, "/v1/ingest/"+b.sourceID, body, stripeHeader(b.secret, body, time.Now())); status != http.StatusRequestEntityTooLarge {
		t.Fatalf("2 MiB Stripe delivery: status %d, want 413", status)
	}
}

// Every column the accepting statement writes holds what the delivery said:
// the inbox row, its payload and its outbox row.
func TestAcceptedEventIsStoredColumnByColumn(t *testing.T) {
	t.Parallel()
	b := setup(t, ingest.Config{})
	src, body, h := b.githubInstallation(t, "delivery-columns", 4343)
	before := time.Now()
	if status, answer := b.post(t, "/v1/ingest/"+src, body, h); status != http.StatusAccepted {
		t.Fatalf("status %d: %s", status, answer)
	}
	var (
		tenant, eventType, objectType, objectID, status, reason, topic, subject string
		bodySum, stored, key, payload                                           []byte
		hasJSONSum, sameInbox                                                   bool
		receivedAt                                                              time.Time
		eventTime                                                               *time.Time
	)
	err := b.pool.QueryRow(context.Background(), `SELECT i.tenant_id::text, i.event_type, i.object_type, i.object_id, i.status, i.reason,
       o.topic, o.headers->>'ce_subject', i.body_sha256, p.body, o.key, o.payload, i.json_sha256 IS NOT NULL, o.inbox_id = i.id,
       i.received_at, i.event_time
FROM inbox i JOIN inbox_payloads p ON p.inbox_id = i.id AND p.received_at = i.received_at JOIN outbox o ON o.inbox_id = i.id
WHERE i.source_id = $1 AND i.event_id = 'delivery-columns'`, src).Scan(&tenant, &eventType, &objectType, &objectID, &status, &reason,
		&topic, &subject, &bodySum, &stored, &key, &payload, &hasJSONSum, &sameInbox, &receivedAt, &eventTime)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(body)
	switch {
	case tenant != b.tenantID || eventType != "installation.created" || objectType != "installation" || objectID != "4343":
		t.Errorf("inbox: tenant %s, type %s, object %s %s", tenant, eventType, objectType, objectID)
	case status != "published" || reason != "" || !hasJSONSum || !bytes.Equal(bodySum, sum[:]):
		t.Errorf("inbox: status %s, reason %q, JSON sum %v, body sum %x", status, reason, hasJSONSum, bodySum)
	case !bytes.Equal(stored, body) || !bytes.Equal(payload, body) || !sameInbox:
		t.Errorf("payload %q, outbox payload %q, outbox row of this inbox row %v", stored, payload, sameInbox)
	case topic != "sluice.github" || string(key) != b.tenantID+"/installation/4343" || subject != "4343":
		t.Errorf("outbox: topic %s, key %s, subject %s", topic, key, subject)
	case receivedAt.Before(before.Add(-time.Second)) || receivedAt.After(time.Now().Add(time.Second)):
		t.Errorf("received at %v, request at %v", receivedAt, before)
	case eventTime == nil || !eventTime.Equal(time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)):
		t.Errorf("event time %v", eventTime)
	}
}
