// Package eventtransform compiles and applies an endpoint's transformation:
// a CEL expression (cel.dev/cel-go) over the same variables as a filter
// expression (internal/eventfilter's Env: the event's envelope, its JSON
// body and its data) that yields a map, sent as the JSON body in place of
// the event's, e.g.
//
//	{"id": data.object.id, "amount": data.object.amount_paid, "kind": type}
//
// CEL is chosen for what filters chose it (and they share its
// environment): no I/O, no side effects, no recursion, every expression
// ends, and an evaluation is metered and stopped at CostLimit. WebAssembly
// would bound memory as well but brings a runtime and a toolchain to write
// a transformation with; a JavaScript interpreter cannot bound the memory
// one run takes.
//
// The invariant this package keeps: an expression is parsed and checked
// once (Compile, at an endpoint's creation or update, and when the
// deliverer first sees its text), never per delivery; an application
// costs at most CostLimit and yields at most MaxOutput bytes of JSON, or
// fails with an error that says why (Apply never panics over a tenant's
// expression or an event's body).
package eventtransform

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/sluicehq/sluice/internal/eventfilter"
	"github.com/sluicehq/sluice/internal/refusal"
)

// Limits of a transformation.
const (
	// MaxLength bounds a transformation's text, in characters: a
	// projection of a few dozen fields, renamed, fits many times.
	MaxLength = 4096
	// CostLimit bounds one application's cost, in CEL's cost units: a
	// filter's limit (eventfilter.CostLimit), enough to copy and rename
	// hundreds of fields, far below a comprehension over a large body.
	CostLimit = eventfilter.CostLimit
	// MaxOutput bounds the JSON an application yields (256 KiB): a
	// transformation reshapes a webhook, it does not inflate it; past it
	// the delivery is dead, never truncated.
	MaxOutput = 256 << 10
)

// Program is a compiled, checked transformation, safe for concurrent use.
type Program struct {
	text string
	prg  cel.Program
}

// invalid is Compile's refusal (refusal.Invalid, field "transformation").
func invalid(format string, args ...any) error {
	return refusal.InvalidField("transformation", format, args...)
}

// Compile parses and type-checks expr, which must yield a map (or a value
// only known at evaluation: a field of the body). One that does not is
// refused (refusal.Invalid, field "transformation"), saying where and why.
func Compile(expr string) (*Program, error) {
	e, ast, err := eventfilter.Check("transformation", expr, MaxLength)
	if err != nil {
		return nil, err
	}
	if out := ast.OutputType(); out.Kind() != types.MapKind && !out.IsExactType(types.DynType) {
		return nil, invalid("it yields %s, not a map (the JSON object sent as the body)", out)
	}
	prg, err := e.Program(ast, cel.CostLimit(CostLimit), cel.EvalOptions(cel.OptOptimize))
	if err != nil {
		return nil, invalid("%s", eventfilter.OneLine(err.Error()))
	}
	return &Program{text: expr, prg: prg}, nil
}

// String is the transformation's text.
func (p *Program) String() string { return p.text }

// Error is why an application failed: its Class is "over_cost" (stopped
// at CostLimit), "too_large" (more than MaxOutput) or "failed" (a field
// the body lacks, a value that is not a map, a map whose keys are not
// strings).
type Error struct {
	Class string
	Err   error
}

func (e *Error) Error() string {
	return fmt.Sprintf("transformation %s: %v", strings.ReplaceAll(e.Class, "_", " "), e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// valueType is what a result is converted to before it is written as
// JSON: a struct value holds any JSON CEL can build.
var valueType = reflect.TypeOf(&structpb.Value{})

// Apply evaluates p over v and returns the JSON object it yields, its keys
// sorted (encoding/json's order), numbers as JSON numbers (a float64 each:
// integers beyond 2^53 lose precision), or an *Error.
func (p *Program) Apply(v eventfilter.Vars) ([]byte, error) {
	out, _, err := p.prg.Eval(v.Activation())
	if err != nil {
		if eventfilter.IsOverCost(err) {
			return nil, &Error{Class: "over_cost", Err: err}
		}
		return nil, &Error{Class: "failed", Err: err}
	}
	if out.Type() != types.MapType {
		return nil, &Error{Class: "failed", Err: fmt.Errorf("it yielded %s, not a map", out.Type())}
	}
	native, err := out.ConvertToNative(valueType)
	if err != nil {
		return nil, &Error{Class: "failed", Err: fmt.Errorf("its map is not JSON: %w", err)}
	}
	body, err := json.Marshal(native.(*structpb.Value).AsInterface())
	if err != nil {
		return nil, &Error{Class: "failed", Err: fmt.Errorf("its map is not JSON: %w", err)}
	}
	if len(body) > MaxOutput {
		return nil, &Error{Class: "too_large", Err: fmt.Errorf("it yielded %d bytes of JSON, at most %d", len(body), MaxOutput)}
	}
	return body, nil
}
