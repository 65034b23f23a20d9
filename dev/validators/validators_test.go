// Package validators measures JSON Schema validators on Sluice's own
// schemas and bodies, to choose one by measurement (issue "Cost per
// event"). A module of its own, so the candidates never reach Sluice's
// go.mod. Run: cd dev/validators && go test -run . -bench . -benchmem -cpu 1
package validators

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	google "github.com/google/jsonschema-go/jsonschema"
	kaptinlin "github.com/kaptinlin/jsonschema"
	tekuri "github.com/santhosh-tekuri/jsonschema/v6"
)

const schemaFile = "../../schemas/stripe/invoice.paid.v1.json"

// body is a Stripe invoice.paid as the bench's generator sends it.
var body = []byte(`{"id":"evt_1","object":"event","api_version":"2024-06-20","type":"invoice.paid","created":1700000000,` +
	`"livemode":false,"pending_webhooks":1,"data":{"object":{"id":"in_1","object":"invoice","customer":"cus_1",` +
	`"amount_paid":2000,"amount_due":2000,"currency":"usd","status":"paid","payment_intent":"pi_1",` +
	`"description":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}}}`)

// invalid breaks the schema: amount_paid is a string.
var invalid = bytes.Replace(body, []byte(`"amount_paid":2000`), []byte(`"amount_paid":"2000"`), 1)

func schema(tb testing.TB) []byte {
	tb.Helper()
	b, err := os.ReadFile(filepath.FromSlash(schemaFile))
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// numberDoc decodes as Sluice does for tekuri (numbers as json.Number).
func numberDoc(tb testing.TB, b []byte) any {
	tb.Helper()
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		tb.Fatal(err)
	}
	return v
}

func plainDoc(tb testing.TB, b []byte) any {
	tb.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		tb.Fatal(err)
	}
	return v
}

type validator struct {
	name     string
	validate func(tb testing.TB, doc []byte) bool // parses doc its own way, then validates
	parsed   func() bool                          // validates body parsed beforehand, as ingest parses once for all its reads
	compile  func(tb testing.TB)
}

func validators(tb testing.TB) []validator {
	raw := schema(tb)
	tk := func(tb testing.TB) *tekuri.Schema {
		c := tekuri.NewCompiler()
		doc, err := tekuri.UnmarshalJSON(bytes.NewReader(raw))
		if err != nil {
			tb.Fatal(err)
		}
		if err := c.AddResource("https://sluice.dev/schemas/stripe/invoice.paid.v1.json", doc); err != nil {
			tb.Fatal(err)
		}
		s, err := c.Compile("https://sluice.dev/schemas/stripe/invoice.paid.v1.json")
		if err != nil {
			tb.Fatal(err)
		}
		return s
	}
	kp := func(tb testing.TB) *kaptinlin.Schema {
		s, err := kaptinlin.NewCompiler().Compile(raw)
		if err != nil {
			tb.Fatal(err)
		}
		return s
	}
	gg := func(tb testing.TB) *google.Resolved {
		var s google.Schema
		if err := json.Unmarshal(raw, &s); err != nil {
			tb.Fatal(err)
		}
		r, err := s.Resolve(nil)
		if err != nil {
			tb.Fatal(err)
		}
		return r
	}
	tks, kps, ggs := tk(tb), kp(tb), gg(tb)
	numbers, plain := numberDoc(tb, body), plainDoc(tb, body)
	return []validator{
		{"santhosh-tekuri-v6", func(tb testing.TB, b []byte) bool { return tks.Validate(numberDoc(tb, b)) == nil },
			func() bool { return tks.Validate(numbers) == nil }, func(tb testing.TB) { tk(tb) }},
		{"kaptinlin", func(tb testing.TB, b []byte) bool { return kps.ValidateJSON(b).IsValid() },
			func() bool { return kps.Validate(plain).IsValid() }, func(tb testing.TB) { kp(tb) }},
		{"google-jsonschema-go", func(tb testing.TB, b []byte) bool { return ggs.Validate(plainDoc(tb, b)) == nil },
			func() bool { return ggs.Validate(plain) == nil }, func(tb testing.TB) { gg(tb) }},
	}
}

// Every candidate must accept the body and refuse the broken one, or its
// figures mean nothing.
func TestCandidatesAgree(t *testing.T) {
	for _, v := range validators(t) {
		if !v.validate(t, body) {
			t.Errorf("%s refuses a valid invoice.paid", v.name)
		}
		if v.validate(t, invalid) {
			t.Errorf("%s accepts amount_paid as a string", v.name)
		}
		if !v.parsed() {
			t.Errorf("%s refuses a valid invoice.paid parsed beforehand", v.name)
		}
	}
}

// each runs op of every candidate as a sub-benchmark; op fails the
// benchmark when the candidate refuses the valid body.
func each(b *testing.B, op func(b *testing.B, v validator) bool) {
	for _, v := range validators(b) {
		b.Run(v.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if !op(b, v) {
					b.Fatal("refused")
				}
			}
		})
	}
}

func BenchmarkValidate(b *testing.B) {
	each(b, func(b *testing.B, v validator) bool { return v.validate(b, body) })
}

func BenchmarkValidateParsed(b *testing.B) {
	each(b, func(_ *testing.B, v validator) bool { return v.parsed() })
}

func BenchmarkCompile(b *testing.B) {
	each(b, func(b *testing.B, v validator) bool { v.compile(b); return true })
}
