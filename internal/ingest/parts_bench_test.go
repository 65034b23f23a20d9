package ingest

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/provider/kinds/stripe"
	"github.com/sluicehq/sluice/internal/provider/signature"
)

// BenchmarkRequestParts times the parts of an accepted webhook's path that
// any request path of this design does, on the body the bench's generator
// sends (an invoice.paid of about 1 KiB): its signature, the content sum
// and the canonical JSON sum stored for redeliveries, and the parse into
// the values the schema check and the pointers read. README's Targets
// compares their sum with what the ingest target leaves beyond HTTP.
func BenchmarkRequestParts(b *testing.B) {
	body := fmt.Appendf(nil, `{"id":"evt_bench_1","object":"event","api_version":"2024-06-20","type":"invoice.paid","created":%d,`+
		`"livemode":false,"pending_webhooks":1,"data":{"object":{"id":"in_bench_1","object":"invoice","customer":"cus_1",`+
		`"amount_paid":2000,"amount_due":2000,"currency":"usd","status":"paid","description":%q}}}`,
		time.Now().Unix(), strings.Repeat("x", 640))
	scheme, err := stripe.Provider{}.Open(nil, 0)
	if err != nil {
		b.Fatal(err)
	}
	secret := []byte("whsec_bench")
	h := http.Header{}
	h.Set(signature.StripeHeader, signature.SignStripe(string(secret), body, time.Now()))
	doc, err := parseJSON(body)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("verify", func(b *testing.B) {
		d := signature.Delivery{Header: h, Body: body, Now: time.Now()}
		for b.Loop() {
			if _, err := scheme.Verify(d, [][]byte{secret}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("content-sum", func(b *testing.B) {
		for b.Loop() {
			contentSum(scheme, doc, body)
		}
	})
	b.Run("json-sum", func(b *testing.B) {
		for b.Loop() {
			jsonSum(doc)
		}
	})
	b.Run("parse", func(b *testing.B) {
		for b.Loop() {
			if _, err := parseJSON(body); err != nil {
				b.Fatal(err)
			}
		}
	})
}
