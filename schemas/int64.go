package schemas

import (
	"encoding/json"
	"slices"
	"strconv"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/message"
)

// plainInt64 narrows JSON Schema's "integer" for every schema Sluice
// compiles. The standard calls 1e2, 100.0 and 1e400 integers, but consumers
// read integers into int64 and refuse all three, so an event the schema
// passed would be dead-lettered instead of applied. Here an integer is what
// int64 reads: decimal digits, optional sign, within range. One rule for
// every schema, so no schema file can forget it.
func plainInt64() *jsonschema.Vocabulary {
	return &jsonschema.Vocabulary{
		URL: "https://sluice.dev/vocab/plain-int64",
		Compile: func(_ *jsonschema.CompilerContext, obj map[string]any) (jsonschema.SchemaExt, error) {
			if !typeIncludes(obj["type"], "integer") {
				return nil, nil
			}
			return int64Check{}, nil
		},
	}
}

func typeIncludes(t any, name string) bool {
	switch t := t.(type) {
	case string:
		return t == name
	case []any:
		return slices.Contains(t, any(name))
	}
	return false
}

type int64Check struct{}

// Validate reports a number an int64 cannot hold as written; other values
// are left to the "type" keyword.
func (int64Check) Validate(ctx *jsonschema.ValidatorContext, v any) {
	n, ok := v.(json.Number)
	if !ok {
		return
	}
	if _, err := strconv.ParseInt(string(n), 10, 64); err != nil {
		ctx.AddError(&notInt64{got: string(n)})
	}
}

type notInt64 struct{ got string }

func (*notInt64) KeywordPath() []string { return []string{"type"} }

func (e *notInt64) LocalizedString(p *message.Printer) string {
	got := e.got
	if len(got) > 40 {
		got = got[:40] + "..."
	}
	return p.Sprintf("%s is not an integer written plainly within 64 bits", got)
}
