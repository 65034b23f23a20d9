package schemas

import (
	"encoding/json"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Example is a minimal body e's schema accepts: each object with only its
// required properties, each array with its fewest items, a const or the
// first of an enum where the schema names them, the first of its
// examples, and otherwise the least value of each type ("test" for a
// string, at its least length; 0 or the minimum for a number; false). A
// test event of a type no event was received of is built from it. A
// schema it cannot satisfy (a pattern, a format it does not know) is an
// error: the body is validated before it is returned.
func (e *Entry) Example() ([]byte, error) {
	b, err := json.Marshal(example(e.schema, 0))
	if err != nil {
		return nil, fmt.Errorf("example of %s.%s: %w", e.Kind, e.Type, err)
	}
	if err := e.Validate(b); err != nil {
		return nil, fmt.Errorf("no minimal example of %s.%s: %w", e.Kind, e.Type, err)
	}
	return b, nil
}

// maxExampleDepth bounds a recursive schema's example.
const maxExampleDepth = 24

func example(s *jsonschema.Schema, depth int) any {
	if s == nil || depth > maxExampleDepth {
		return nil
	}
	switch {
	case s.Const != nil:
		return *s.Const
	case s.Enum != nil && len(s.Enum.Values) > 0:
		return s.Enum.Values[0]
	case len(s.Examples) > 0:
		return s.Examples[0]
	case len(s.OneOf) > 0:
		return example(s.OneOf[0], depth+1)
	case len(s.AnyOf) > 0:
		return example(s.AnyOf[0], depth+1)
	}
	v := ofType(s, depth)
	for _, part := range append([]*jsonschema.Schema{s.Ref}, s.AllOf...) {
		if part != nil {
			v = merge(v, example(part, depth+1))
		}
	}
	return v
}

// merge is a's object with b's properties added (allOf, $ref beside
// other keywords); otherwise the one that is not nil.
func merge(a, b any) any {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	switch {
	case aok && bok:
		for k, v := range bm {
			if _, ok := am[k]; !ok {
				am[k] = v
			}
		}
		return am
	case a == nil:
		return b
	}
	return a
}

// ofType is the least value of the schema's first type (an object when it
// names properties but no type; nil when it names neither).
func ofType(s *jsonschema.Schema, depth int) any {
	types := []string{}
	if s.Types != nil {
		types = s.Types.ToStrings()
	}
	if len(types) == 0 && (len(s.Properties) > 0 || len(s.Required) > 0) {
		types = []string{"object"}
	}
	if len(types) == 0 {
		return nil
	}
	switch types[0] {
	case "object":
		m := map[string]any{}
		for _, name := range s.Required {
			m[name] = example(s.Properties[name], depth+1)
		}
		return m
	case "array":
		return items(s, depth)
	case "string":
		return text(s)
	case "integer", "number":
		return number(s)
	case "boolean":
		return false
	}
	return nil
}

func items(s *jsonschema.Schema, depth int) []any {
	n := 0
	if s.MinItems != nil {
		n = *s.MinItems
	}
	out := make([]any, 0, n)
	for i := range n {
		item := s.Items2020
		if i < len(s.PrefixItems) {
			item = s.PrefixItems[i]
		}
		out = append(out, example(item, depth+1))
	}
	return out
}

// text is a string of the schema's format, or "test" cut or padded to its
// bounds.
func text(s *jsonschema.Schema) string {
	if s.Format != nil {
		switch s.Format.Name {
		case "date-time":
			return time.Now().UTC().Format(time.RFC3339)
		case "date":
			return time.Now().UTC().Format(time.DateOnly)
		case "email":
			return "test@example.com"
		case "uri", "url":
			return "https://example.com/"
		case "uuid":
			return "00000000-0000-4000-8000-000000000000"
		}
	}
	v := "test"
	if s.MinLength != nil && *s.MinLength > len(v) {
		v += strings.Repeat("x", *s.MinLength-len(v))
	}
	if s.MaxLength != nil && *s.MaxLength < len(v) {
		v = v[:*s.MaxLength]
	}
	return v
}

// number is 0, or the least whole number within the schema's bounds.
func number(s *jsonschema.Schema) any {
	n := new(big.Rat)
	if s.Minimum != nil && s.Minimum.Cmp(n) > 0 {
		n = ceil(s.Minimum)
	}
	if s.ExclusiveMinimum != nil && s.ExclusiveMinimum.Cmp(n) >= 0 {
		n = new(big.Rat).Add(ceil(s.ExclusiveMinimum), big.NewRat(1, 1))
	}
	if s.Maximum != nil && s.Maximum.Cmp(n) < 0 {
		n = s.Maximum
	}
	if n.IsInt() {
		return json.Number(n.Num().String())
	}
	return json.Number(n.FloatString(6))
}

func ceil(r *big.Rat) *big.Rat {
	q, m := new(big.Int).QuoRem(r.Num(), r.Denom(), new(big.Int))
	if m.Sign() > 0 {
		q.Add(q, big.NewInt(1))
	}
	return new(big.Rat).SetInt(q)
}
