package ingest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/internal/provider"
	"github.com/sluicehq/sluice/schemas"
)

// BenchmarkBatchEvent is one event of a POST /v1/events batch of a
// tenant's declared type, from its raw JSON to the delivery ingest commits:
// its fields read, the canonical JSON sum, the schema check.
func BenchmarkBatchEvent(b *testing.B) {
	entry, err := schemas.Compile(schemas.Entry{Kind: string(provider.KindAPI), Type: "order.created", Version: 1, ObjectType: "order", Topic: "orders"},
		"https://sluice.invalid/eventtype/t/api/order.created/v1.json", []byte(`{"type":"object","required":["id","type","data"],
		"properties":{"id":{"type":"string"},"data":{"type":"object","required":["amount"],"properties":{"amount":{"type":"integer","minimum":0}}}}}`))
	if err != nil {
		b.Fatal(err)
	}
	catalogue := fakeCatalogue{"api order.created": entry}
	raw := fmt.Appendf(nil, `{"id":"ord_evt_1","type":"order.created","object_id":"ord_1","time":"2026-12-02T06:00:00Z","data":{"amount":2000,"note":%q}}`,
		strings.Repeat("x", 640))
	src := &source{ID: "8f1d3c1e-6a43-4a4e-9a51-4c2f1f6a7b10", TenantID: "2b7e4d7e-0f0e-4a7c-8d5e-5f7b9a1c2d3e", Kind: provider.KindAPI}
	s := &Service{}
	b.ReportAllocs()
	for b.Loop() {
		pe, err := readBatchEvent(raw, catalogue)
		if err != nil {
			b.Fatal(err)
		}
		if d := s.delivery(src, pe, raw, "", time.Now()); d.Status != "published" || d.JSONSum == nil {
			b.Fatalf("status %s, reason %s", d.Status, d.Reason)
		}
	}
}

// An event of a batch is parsed once: readBatchEvent hands delivery the
// document its sums and schema check read, which parsed it twice more.
func TestBatchEventIsParsedOnce(t *testing.T) {
	t.Parallel()
	pe, err := readBatchEvent([]byte(`{"id":"e1","type":"order.created","object_id":"o1","data":{}}`), fakeCatalogue{})
	if err != nil {
		t.Fatal(err)
	}
	if pe.doc == nil {
		t.Fatal("the event's document was not kept for delivery")
	}
}
