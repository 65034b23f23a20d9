package schemas

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/sluicehq/sluice/internal/testenv/examples"
)

// The quick check may only be sure where the validator agrees: a document
// it passes is one the validator accepts, one it fails one the validator
// refuses. Every built-in schema (and a set of schemas using each keyword
// the check knows) is checked against thousands of mutations of valid
// documents: types swapped, keys dropped and added, numbers written every
// way JSON allows, strings at and past their lengths.
func TestQuickCheckAgreesWithTheValidator(t *testing.T) {
	t.Parallel()
	c, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range c.entries {
		t.Run(e.File, func(t *testing.T) {
			t.Parallel()
			if e.quick == nil {
				t.Fatal("a built-in schema has no quick check: every event of its type pays the validator's full cost")
			}
			raw, err := fs.ReadFile(files, e.File)
			if err != nil {
				t.Fatal(err)
			}
			seeds := []any{sample(t, decode(t, raw))}
			if ex, ok := examples.Find(e.Kind, e.Type); ok {
				seeds = append(seeds, decode(t, ex))
			}
			agree(t, e.schema, e.quick, seeds, 3000)
		})
	}
}

func TestQuickCheckKnowsItsKeywords(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		schema string
		seeds  []string
	}{
		"refs, recursion and additional properties": {
			`{"$defs":{"node":{"type":"object","properties":{"name":{"type":"string","pattern":"^[a-z]+$"},"kids":{"type":"array","items":{"$ref":"#/$defs/node"},"maxItems":3}},"additionalProperties":false}},"$ref":"#/$defs/node"}`,
			[]string{`{"name":"a","kids":[{"name":"b","kids":[]},{"name":"c"}]}`},
		},
		"combinators": {
			`{"anyOf":[{"type":"string","minLength":2},{"type":"integer","exclusiveMinimum":5}],"not":{"const":"no"},"oneOf":[{"type":"string"},{"type":"integer","maximum":10},{"type":"number","maximum":20}],"allOf":[true]}`,
			[]string{`"abc"`, `15`},
		},
		"enums, consts and objects": {
			`{"type":"object","required":["kind"],"minProperties":1,"maxProperties":4,"properties":{"kind":{"enum":["a","b",null,true]},"fixed":{"const":null},"rest":{"type":["string","null"],"maxLength":1}},"additionalProperties":{"type":"integer","minimum":-3,"maximum":3}}`,
			[]string{`{"kind":"a","fixed":null,"x":2}`, `{"kind":null,"rest":"é"}`},
		},
		"sizes": {
			`{"type":"object","minProperties":2,"maxProperties":3,"properties":{"a":{"type":"array","minItems":1,"maxItems":2}}}`,
			[]string{`{"a":[1],"b":2}`, `{"a":[1,2],"b":2,"c":3}`},
		},
		"exclusive bounds": {
			`{"type":"object","properties":{"n":{"type":"integer","exclusiveMinimum":5,"exclusiveMaximum":11},"m":{"type":["integer","number"]}}}`,
			[]string{`{"n":6,"m":1}`, `{"n":10}`},
		},
		"bounds that are no int64": {
			`{"type":"object","properties":{"n":{"type":"number","minimum":0.5,"exclusiveMaximum":1e30},"m":{"type":"integer","minimum":-9223372036854775808}}}`,
			[]string{`{"m":5}`}, // n is always unsure
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e, err := Compile(Entry{Kind: "k", Type: "t", Version: 1}, "https://sluice.invalid/t.json", []byte(tc.schema))
			if err != nil {
				t.Fatal(err)
			}
			if e.quick == nil {
				t.Fatal("no quick check")
			}
			var seeds []any
			for _, s := range tc.seeds {
				seeds = append(seeds, decode(t, []byte(s)))
			}
			agree(t, e.schema, e.quick, seeds, 3000)
		})
	}
}

// A keyword the quick check does not know leaves the schema to the
// validator, wherever it appears.
func TestQuickCheckLeavesUnknownKeywordsToTheValidator(t *testing.T) {
	t.Parallel()
	for _, schema := range []string{
		`{"type":"array","uniqueItems":true}`,
		`{"properties":{"a":{"if":{"type":"string"},"then":{"minLength":1}}}}`,
		`{"patternProperties":{"^x":{"type":"string"}}}`,
		`{"$defs":{"a":{"dependentRequired":{"a":["b"]}}},"properties":{"x":{"$ref":"#/$defs/a"}}}`,
		`{"type":"number","multipleOf":2}`,
		`{"enum":[1,2]}`,
		`{"const":{"a":1}}`,
		`{"prefixItems":[{"type":"string"}]}`,
		`{"unevaluatedProperties":false}`,
	} {
		e, err := Compile(Entry{Kind: "k", Type: "t", Version: 1}, "https://sluice.invalid/t.json", []byte(schema))
		if err != nil {
			t.Fatalf("%s: %v", schema, err)
		}
		if e.quick != nil {
			t.Errorf("%s: got a quick check", schema)
		}
	}
}

// agree mutates each seed n times and holds the quick check to the
// validator's verdict; each seed must pass (the check is of use), and the
// mutations must include some the validator refuses and some the check is
// sure of both ways (the test can tell).
func agree(t *testing.T, sch *jsonschema.Schema, q *quick, seeds []any, n int) {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	counts := map[verdict]int{}
	refused := 0
	for _, seed := range seeds {
		if err := sch.Validate(seed); err != nil {
			t.Fatalf("seed refused by the validator: %v", err)
		}
		if got := q.check(seed); got != pass {
			t.Fatalf("a valid seed is %v, not pass: %s", got, show(seed))
		}
		for range n {
			doc := mutate(rng, deepCopy(seed), 1+rng.IntN(3))
			got := q.check(doc)
			err := sch.Validate(doc)
			counts[got]++
			if err != nil {
				refused++
			}
			if got == pass && err != nil {
				t.Fatalf("quick check passed what the validator refuses (%v): %s", err, show(doc))
			}
			if got == fail && err == nil {
				t.Fatalf("quick check failed what the validator accepts: %s", show(doc))
			}
		}
	}
	if refused == 0 || counts[pass] == 0 || counts[fail] == 0 {
		t.Fatalf("mutations did not reach both verdicts: %v, %d refused", counts, refused)
	}
}

// sample builds a valid document from a schema (as JSON values): every
// required property, the first of oneOf/anyOf, the lowest value a bound
// allows.
func sample(t *testing.T, s any) any {
	t.Helper()
	m, ok := s.(map[string]any)
	if !ok {
		return nil
	}
	if c, ok := m["const"]; ok {
		return c
	}
	if e, ok := m["enum"].([]any); ok {
		return e[0]
	}
	for _, k := range []string{"oneOf", "anyOf"} {
		if alts, ok := m[k].([]any); ok {
			return sample(t, alts[0])
		}
	}
	typ := m["type"]
	if list, ok := typ.([]any); ok {
		typ = list[0]
	}
	switch typ {
	case "object":
		out := map[string]any{}
		props, _ := m["properties"].(map[string]any)
		req, _ := m["required"].([]any)
		for _, r := range req {
			out[r.(string)] = sample(t, props[r.(string)])
		}
		return out
	case "string":
		n := 1
		if v, ok := m["minLength"].(json.Number); ok {
			fmt.Sscan(string(v), &n)
		}
		return strings.Repeat("s", n)
	case "integer", "number":
		if v, ok := m["minimum"].(json.Number); ok {
			return v
		}
		return json.Number("1")
	case "boolean":
		return true
	case "array":
		return []any{}
	case "null", nil:
		return nil
	}
	t.Fatalf("sample: type %v", typ)
	return nil
}

// mutate changes k random places of doc (which it may replace whole).
func mutate(rng *rand.Rand, doc any, k int) any {
	for range k {
		doc = mutateOne(rng, doc)
	}
	return doc
}

var numbers = []string{"0", "-0", "1", "-1", "2", "5", "6", "10", "11", "1.0", "1.5", "0.5", "1e2", "-3", "4", "255", "256",
	"1700000000", "9223372036854775807", "9223372036854775808", "-9223372036854775809", "1e400", "-0.0e0"}

var texts = []string{"", "s", "a", "b", "no", "ab", "é", "éé", "A1", "invoice", "invoice.paid", "paid", "2026-03-04T05:06:07Z",
	strings.Repeat("x", 255), strings.Repeat("x", 256), strings.Repeat("é", 255), strings.Repeat("é", 256)}

func randomValue(rng *rand.Rand) any {
	switch rng.IntN(7) {
	case 0:
		return nil
	case 1:
		return rng.IntN(2) == 0
	case 2, 3:
		return json.Number(numbers[rng.IntN(len(numbers))])
	case 4:
		return texts[rng.IntN(len(texts))]
	case 5:
		return map[string]any{}
	}
	return []any{}
}

func mutateOne(rng *rand.Rand, v any) any {
	switch v := v.(type) {
	case map[string]any:
		keys := slices.Sorted(maps.Keys(v))
		switch r := rng.IntN(10); {
		case r == 0 || len(keys) == 0:
			return randomValue(rng)
		case r == 1:
			delete(v, keys[rng.IntN(len(keys))])
		case r == 2:
			v[[]string{"extra", "x", "kids", "name", "n", "m"}[rng.IntN(6)]] = randomValue(rng)
		default:
			key := keys[rng.IntN(len(keys))]
			v[key] = mutateOne(rng, v[key])
		}
		return v
	case []any:
		switch r := rng.IntN(6); {
		case r == 0:
			return randomValue(rng)
		case r == 1 || len(v) == 0:
			return append(v, randomValue(rng))
		default:
			i := rng.IntN(len(v))
			v[i] = mutateOne(rng, v[i])
			return v
		}
	}
	return randomValue(rng)
}

func deepCopy(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[k] = deepCopy(x)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = deepCopy(x)
		}
		return out
	}
	return v
}

// decode reads JSON the way ingest hands documents to ValidateDoc.
func decode(t *testing.T, raw []byte) any {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

func show(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 2000 {
		b = append(b[:2000], "..."...)
	}
	return string(b)
}

func (v verdict) String() string { return [...]string{"unsure", "pass", "fail"}[v] }

// What a valid invoice.paid costs to validate, parsed: with the quick
// check (what ingest pays) and with the validator alone.
func BenchmarkValidateDoc(b *testing.B) {
	c, err := Load()
	if err != nil {
		b.Fatal(err)
	}
	e, _ := c.Lookup("stripe", "invoice.paid")
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(examples.Payload("stripe", "invoice.paid")))
	if err != nil {
		b.Fatal(err)
	}
	b.Run("quick", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := e.ValidateDoc(doc); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("validator", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := e.schema.Validate(doc); err != nil {
				b.Fatal(err)
			}
		}
	})
}
