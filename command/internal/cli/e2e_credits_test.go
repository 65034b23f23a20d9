package cli

import (
	"net/http"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/envelope"
	"github.com/sluicehq/sluice/internal/testenv"
)

// Scenario 1: a signed invoice.paid becomes one Kafka record in the record
// format of DESIGN.md and one grant of 100 credits.
func TestPaidInvoiceGrantsCreditsOnce(t *testing.T) {
	t.Parallel()
	f := newTenant(t)
	s := testenv.RandomSuffix()
	eventID, invoiceID := "evt_"+s, "in_"+s
	body := invoicePaid(eventID, invoiceID, f.customer, 2000)

	if status := f.sendSigned(t, body); status != http.StatusAccepted {
		t.Fatalf("status = %d, want 202", status)
	}
	// 2xx means durably stored: the row is there the moment we are answered.
	if n := f.inboxRows(t); n != 1 {
		t.Fatalf("inbox rows = %d, want 1", n)
	}

	recs := recordsFor(t, suite.topics.Resource("invoices"), 1, eventID)
	rec := recs[0]
	key := f.tenantID + "/invoice/" + invoiceID
	if string(rec.Key) != key {
		t.Errorf("key = %q, want %q", rec.Key, key)
	}
	if string(rec.Value) != string(body) {
		t.Errorf("value is not the body as received")
	}
	h := headerMap(rec)
	want := map[string]string{
		"ce_specversion":   "1.0",
		"ce_id":            eventID,
		"ce_source":        "/tenants/" + f.tenantID + "/sources/" + f.sourceID,
		"ce_type":          "stripe.invoice.paid",
		"ce_subject":       invoiceID,
		"content-type":     "application/json",
		"ce_tenantid":      f.tenantID,
		"ce_sourceaccount": f.account,
		"ce_partitionkey":  key,
	}
	for k, v := range want {
		if h[k] != v {
			t.Errorf("header %s = %q, want %q", k, h[k], v)
		}
	}
	if _, err := time.Parse(time.RFC3339, h["ce_time"]); err != nil {
		t.Errorf("ce_time = %q: %v", h["ce_time"], err)
	}
	if !regexp.MustCompile(`^00-[0-9a-f]{32}-[0-9a-f]{16}-01$`).MatchString(h["traceparent"]) {
		t.Errorf("traceparent = %q", h["traceparent"])
	}
	if h[envelope.HeaderInboxID] == "" || h[envelope.HeaderOutboxID] == "" {
		t.Errorf("processing ids missing: %v", h)
	}

	waitConsumed(t, rec)
	if n := f.grants(t); n != 1 {
		t.Fatalf("grants = %d, want 1", n)
	}
	if b := f.balance(t); b != 100 {
		t.Fatalf("balance = %d, want 100", b)
	}
	// The confirmation e-mail is a second effect, through the outbox, once.
	if n := count(t, `SELECT count(*) FROM outbox WHERE topic = $1 AND headers->>'ce_tenantid' = $2`,
		suite.topics.Resource("notifications"), f.tenantID); n != 1 {
		t.Fatalf("confirmation e-mail intents = %d, want 1", n)
	}
}

// Invariant 2: the same delivery sent ten times at once is accepted once.
func TestSameDeliveryTenTimesConcurrentlyIsAcceptedOnce(t *testing.T) {
	t.Parallel()
	f := newTenant(t)
	s := testenv.RandomSuffix()
	eventID := "evt_" + s
	body := invoicePaid(eventID, "in_"+s, f.customer, 500)
	sig := stripeSignature(f.secret, body, time.Now())

	var wg sync.WaitGroup
	statuses := make([]int, 10)
	for i := range statuses {
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses[i] = f.post(t, body, sig)
		}()
	}
	wg.Wait()
	for i, st := range statuses {
		if st/100 != 2 {
			t.Errorf("delivery %d: status %d, want 2xx", i, st)
		}
	}
	if n := f.inboxRows(t); n != 1 {
		t.Fatalf("inbox rows = %d, want 1", n)
	}
	if n := f.outboxRows(t); n != 1 {
		t.Fatalf("outbox rows = %d, want 1", n)
	}
	waitConsumed(t, recordsFor(t, suite.topics.Resource("invoices"), 1, eventID)...)
	if n := f.grants(t); n != 1 {
		t.Fatalf("grants = %d, want 1", n)
	}
	if b := f.balance(t); b != 100 {
		t.Fatalf("balance = %d, want 100", b)
	}
}

// Invariant 3: two events about one invoice are two deliveries, one grant.
func TestSecondEventForSameInvoiceGrantsOnce(t *testing.T) {
	t.Parallel()
	f := newTenant(t)
	s := testenv.RandomSuffix()
	invoiceID := "in_" + s
	first, second := "evt_a"+s, "evt_b"+s
	// The second event is sent only once the first was applied, so the
	// business key in Postgres (not a dedup inside one batch) must stop it.
	for _, id := range []string{first, second} {
		if status := f.sendSigned(t, invoicePaid(id, invoiceID, f.customer, 900)); status != http.StatusAccepted {
			t.Fatalf("%s: status %d, want 202", id, status)
		}
		waitConsumed(t, recordsFor(t, suite.topics.Resource("invoices"), 1, id)...)
	}
	if n := f.inboxRows(t); n != 2 {
		t.Fatalf("inbox rows = %d, want 2", n)
	}
	if n := f.grants(t); n != 1 {
		t.Fatalf("grants = %d, want 1", n)
	}
	if b := f.balance(t); b != 100 {
		t.Fatalf("balance = %d, want 100", b)
	}
}

// Unauthenticated requests are refused with 401 and leave no trace in the
// inbox, the outbox or the effects.
func TestBadSignaturesAreRefusedAndStoreNothing(t *testing.T) {
	t.Parallel()
	f := newTenant(t)
	s := testenv.RandomSuffix()
	body := invoicePaid("evt_"+s, "in_"+s, f.customer, 700)
	tampered := invoicePaid("evt_"+s, "in_"+s, f.customer, 7000000)
	cases := map[string]struct {
		body []byte
		sig  string
	}{
		"wrong secret":               {body, stripeSignature("whsec_not_the_secret", body, time.Now())},
		"body changed after signing": {tampered, stripeSignature(f.secret, body, time.Now())},
		"timestamp 10 minutes old":   {body, stripeSignature(f.secret, body, time.Now().Add(-10*time.Minute))},
		"no signature":               {body, ""},
	}
	for name, tc := range cases {
		if status := f.post(t, tc.body, tc.sig); status != http.StatusUnauthorized {
			t.Errorf("%s: status %d, want 401", name, status)
		}
	}
	if n := f.inboxRows(t); n != 0 {
		t.Errorf("inbox rows = %d, want 0", n)
	}
	if n := f.outboxRows(t); n != 0 {
		t.Errorf("outbox rows = %d, want 0", n)
	}
	if n := f.grants(t); n != 0 {
		t.Errorf("grants = %d, want 0", n)
	}
}
