package cli

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/testenv"
)

// No log line carries a payload, a secret or a token. Webhooks valid,
// wrongly signed, stale, malformed and conflicting, API batches with a good
// and a bad key, a record that fails for good and is dead-lettered, and
// dispatcher calls the receiver refuses, all go through a pipeline whose
// every log record (debug included) is captured; markers planted in the
// bodies, the headers, the signing secrets, the key ring, the dispatcher's
// secret and the API keys must appear in none.
func TestNoLogLineCarriesPayloadsSecretsOrTokens(t *testing.T) {
	t.Parallel()
	// The receiver refuses every call: a failed attempt, logged.
	o := startObserved(t, func(*http.Request) int { return http.StatusBadRequest })
	ctx := context.Background()
	f := newTenantIn(t, o.store)
	s := testenv.RandomSuffix()
	payload, header := "payload-marker-"+s, "header-marker-"+s
	_, apiKey, err := o.store.CreateAPIKey(ctx, f.tenantID)
	if err != nil {
		t.Fatal(err)
	}
	badKey := "sk_token-marker-" + s

	invoice := func(eventID, invoiceID, customer, note string) []byte {
		return fmt.Appendf(nil, `{"id":%q,"object":"event","type":"invoice.paid","created":%d,"data":{"object":`+
			`{"id":%q,"object":"invoice","customer":%q,"amount_paid":100,"currency":"usd","status":"paid","description":%q}}}`,
			eventID, time.Now().Unix(), invoiceID, customer, note)
	}
	var signatures []string
	send := func(body []byte, signature string, want int) {
		t.Helper()
		signatures = append(signatures, signature)
		code := o.post(t, f.sourceID, body, map[string]string{"Stripe-Signature": signature, "X-Note": header, "User-Agent": header})
		if code != want {
			t.Fatalf("sending %.60s: answered %d, want %d", body, code, want)
		}
	}
	signed := func(body []byte) string { return stripeSignature(f.secret, body, time.Now()) }

	granted := invoice("evt_ok_"+s, "in_ok_"+s, f.customer, payload)
	send(granted, signed(granted), http.StatusAccepted)
	send(granted, signed(granted), http.StatusOK) // a duplicate
	// Stripe copies of one event are compared on what Stripe keeps
	// (created among them), so the conflict changes it.
	conflict := invoice("evt_ok_"+s, "in_ok_"+s, f.customer, payload+"-changed")
	conflict = []byte(strings.Replace(string(conflict), `"created":`, `"created":1`, 1))
	send(conflict, signed(conflict), http.StatusAccepted)
	forged := invoice("evt_forged_"+s, "in_forged_"+s, f.customer, payload)
	send(forged, stripeSignature("whsec_not"+s, forged, time.Now()), http.StatusUnauthorized)
	send(forged, stripeSignature(f.secret, forged, time.Now().Add(-time.Hour)), http.StatusUnauthorized) // stale
	malformed := []byte(`{"id":"evt_bad_` + s + `","note":"` + payload + `",`)
	send(malformed, signed(malformed), http.StatusBadRequest)
	// No workspace maps this customer: the credits group dead-letters it.
	orphan := invoice("evt_orphan_"+s, "in_orphan_"+s, "cus_unmapped_"+s, payload)
	send(orphan, signed(orphan), http.StatusAccepted)

	batch := []byte(`{"events":[{"id":"evt_api_` + s + `","type":"thing.happened","object_id":"obj_` + s + `","data":{"note":"` + payload + `"}}]}`)
	for key, want := range map[string]int{apiKey: http.StatusOK, badKey: http.StatusUnauthorized} {
		req, _ := http.NewRequest(http.MethodPost, o.baseURL+"/v1/events", strings.NewReader(string(batch)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Fatalf("batch answered %d, want %d", resp.StatusCode, want)
		}
	}

	// Wait for the failures to have happened, from the database: the
	// orphan's dead letter, and the grant's e-mail refused.
	deadLetters := func(group string) (bool, error) {
		var n int
		err := o.store.Pool.QueryRow(ctx, `SELECT count(*) FROM dead_letters WHERE consumer_group LIKE '%.' || $1 AND headers->>'ce_tenantid' = $2`,
			group, f.tenantID).Scan(&n)
		return n > 0, err
	}
	testenv.Eventually(t, time.Minute, "the orphan invoice's dead letter", func() (bool, error) { return deadLetters("credits") })
	testenv.Eventually(t, time.Minute, "the refused e-mail's failed attempt", func() (bool, error) {
		var n int
		err := o.store.Pool.QueryRow(ctx, `SELECT count(*) FROM delivery_attempts a JOIN deliveries d ON d.id = a.delivery_id
WHERE d.tenant_id = $1 AND d.event_type LIKE 'sluice.email.%' AND a.status = 400`, f.tenantID).Scan(&n)
		return n > 0, err
	})

	markers := map[string]string{
		"a body":                payload,
		"a header":              header,
		"the source's secret":   f.secret,
		"the dispatch secret":   dispatchSecret,
		"the key ring":          o.secretKey,
		"an API key":            apiKey,
		"a wrong API key":       badKey,
		"the wrong API key's":   strings.TrimPrefix(badKey, "sk_"),
		"the dispatch secret's": strings.TrimPrefix(dispatchSecret, "whsec_"),
	}
	for i, sig := range signatures {
		markers[fmt.Sprintf("signature %d", i)] = sig
		if _, mac, ok := strings.Cut(sig, "v1="); ok {
			markers[fmt.Sprintf("MAC %d", i)] = mac
		}
	}
	// Every line the pipeline writes, its drain included.
	o.stop()
	lines := o.logs.lines()
	if len(lines) == 0 {
		t.Fatal("nothing was logged")
	}
	for _, line := range lines {
		for what, marker := range markers {
			if strings.Contains(line, marker) {
				t.Errorf("a log line carries %s: %s", what, line)
			}
		}
	}
}
