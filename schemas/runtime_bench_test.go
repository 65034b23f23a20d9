package schemas_test

import (
	"fmt"
	"testing"

	"github.com/sluicehq/sluice/schemas"
)

// A tenant's type of the size the bench declares (dev/bench's catalogue):
// what one compilation and one validation of such a schema cost, to tell
// first use from steady state in the catalogue's profile.
var tenantSchema = []byte(`{"type":"object","required":["id","type","data"],
	"properties":{"id":{"type":"string"},"type":{"const":"bench.type_1"},"created":{"type":"integer"},
	"data":{"type":"object","required":["object"],"properties":{"object":{"type":"object","required":["id"],
	"properties":{"id":{"type":"string","maxLength":255},"amount":{"type":"integer","minimum":0}}}}}}}`)

func BenchmarkCompileTenantSchema(b *testing.B) {
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := schemas.Compile(schemas.Entry{Kind: "stripe", Type: "bench.type_1", Version: 1},
			fmt.Sprintf("https://sluice.invalid/eventtype/t/stripe/bench.type_1/v%d.json", i), tenantSchema); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkValidateTenantSchema(b *testing.B) {
	e, err := schemas.Compile(schemas.Entry{Kind: "stripe", Type: "bench.type_1", Version: 1}, "https://sluice.invalid/eventtype/t/stripe/bench.type_1/v1.json", tenantSchema)
	if err != nil {
		b.Fatal(err)
	}
	body := []byte(`{"id":"evt_1","object":"event","api_version":"2024-06-20","type":"bench.type_1","created":1700000000,` +
		`"livemode":false,"pending_webhooks":1,"data":{"object":{"id":"in_1","object":"invoice","customer":"cus_1",` +
		`"amount_paid":2000,"amount_due":2000,"currency":"usd","status":"paid","description":"x"}}}`)
	b.ReportAllocs()
	for b.Loop() {
		if err := e.Validate(body); err != nil {
			b.Fatal(err)
		}
	}
}
