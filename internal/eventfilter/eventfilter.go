// Package eventfilter compiles and evaluates the expressions an endpoint
// takes events by, besides their types: CEL (the Common Expression
// Language, cel.dev/cel-go) over the event's envelope and its JSON body,
// e.g. `data.object.amount_paid > 10000 && subject.startsWith("in_")`.
//
// CEL is made for expressions written by people other than those who run
// the program: its only iteration runs over a list or a map, with no
// recursion, no I/O and no side effects (so every expression ends), it is
// type-checked before it runs, and its evaluation can be metered. The invariant this package keeps: an expression is
// parsed and checked once (Compile, at an endpoint's creation and at every
// refresh of the fan-out's view), never per event, and no evaluation costs
// more than the cost limit; one that would is stopped and counts as "not
// taken", never as an error that stops the fan-out.
//
// The variables an expression sees:
//
//	id, type, source, subject  strings: the event's envelope (CloudEvents)
//	time                       timestamp: the provider's event time
//	tenant_id, source_account  strings
//	body                       the JSON body, parsed (null when it is not JSON,
//	                           or longer than MaxBody)
//	data                       body.data when the body is an object with one
//	                           (Stripe, Standard Webhooks, CloudEvents), else null
package eventfilter

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/interpreter"

	"github.com/sluicehq/sluice/internal/refusal"
)

// Limits of an expression.
const (
	// MaxLength bounds an expression's text, in characters.
	MaxLength = 2048
	// CostLimit bounds one evaluation's cost, in CEL's cost units (about
	// one per operation, one per character compared or traversed): far
	// above any filter over a webhook's fields, far below a runaway
	// comprehension over a large body.
	CostLimit = 100_000
	// MaxBody bounds the body an expression sees: a larger one (a GitHub
	// push can be 25 MiB) is null to it, since parsing it for every event
	// would cost the fan-out many times its size in memory.
	MaxBody = 1 << 20
)

// Program is a compiled, checked expression, safe for concurrent use.
type Program struct {
	text string
	prg  cel.Program
}

// Event is what an expression is evaluated over.
type Event struct {
	ID, Type, Source, Subject string
	Time                      time.Time
	TenantID, SourceAccount   string
	// Body is the event's body as received; JSON of at most MaxBody bytes
	// is parsed, anything else is null to the expression.
	Body []byte
}

// Env declares the variables every expression over an event sees, a
// filter's and a transformation's (internal/eventfilter/eventtransform) alike, with
// the parser's limits. It is built by each Compile, which costs far more
// than an evaluation: the fan-out compiles an expression only when its
// text is new (endpoints.NewIndex reuses the programs), the deliverer
// when a target's transformation changes.
func Env() (*cel.Env, error) {
	return cel.NewEnv(
		cel.Variable("id", cel.StringType),
		cel.Variable("type", cel.StringType),
		cel.Variable("source", cel.StringType),
		cel.Variable("subject", cel.StringType),
		cel.Variable("time", cel.TimestampType),
		cel.Variable("tenant_id", cel.StringType),
		cel.Variable("source_account", cel.StringType),
		cel.Variable("body", cel.DynType),
		cel.Variable("data", cel.DynType),
		cel.CrossTypeNumericComparisons(true),
		cel.ParserExpressionSizeLimit(MaxLength),
		cel.ParserRecursionLimit(64),
	)
}

// Check is the first steps of compiling any expression over an event, a
// filter's and a transformation's: expr, at most maxLength characters,
// parsed and type-checked in Env. A refusal (refusal.Invalid) names field
// and says where (line:column) and why in CEL's words; the caller judges
// the output type and makes the program.
func Check(field, expr string, maxLength int) (*cel.Env, *cel.Ast, error) {
	if strings.TrimSpace(expr) == "" {
		return nil, nil, refusal.InvalidField(field, "empty")
	}
	if n := len([]rune(expr)); n > maxLength {
		return nil, nil, refusal.InvalidField(field, "%d characters, at most %d", n, maxLength)
	}
	e, err := Env()
	if err != nil {
		return nil, nil, fmt.Errorf("expression environment: %w", err)
	}
	ast, iss := e.Compile(expr)
	if iss.Err() != nil {
		return nil, nil, refusal.InvalidField(field, "%s", OneLine(iss.Err().Error()))
	}
	return e, ast, nil
}

// invalid is Compile's refusal: the expression, not the process, is at
// fault (refusal.Invalid, field "expression"); its text says where and why.
func invalid(format string, args ...any) error {
	return refusal.InvalidField("expression", format, args...)
}

// Compile parses and type-checks expr, which must yield a bool (or a value
// only known at evaluation: a field of the body). An expression that does
// not is refused (refusal.Invalid, field "expression"), saying where
// (line:column) and why in CEL's words.
func Compile(expr string) (*Program, error) {
	e, ast, err := Check("expression", expr, MaxLength)
	if err != nil {
		return nil, err
	}
	if out := ast.OutputType(); !out.IsExactType(types.BoolType) && !out.IsExactType(types.DynType) {
		return nil, invalid("it yields %s, not a bool (true: the endpoint takes the event)", out)
	}
	prg, err := e.Program(ast, cel.CostLimit(CostLimit), cel.EvalOptions(cel.OptOptimize))
	if err != nil {
		return nil, invalid("%s", OneLine(err.Error()))
	}
	return &Program{text: expr, prg: prg}, nil
}

// OneLine keeps the first line of CEL's message (where and why, not its
// caret drawing), for a JSON problem and a terminal line.
func OneLine(s string) string {
	s = strings.TrimPrefix(s, "ERROR: ")
	s = strings.Replace(s, "<input>:", "at ", 1)
	lines := strings.Split(s, "\n")
	return strings.Join(strings.Fields(lines[0]), " ")
}

// String is the expression's text.
func (p *Program) String() string { return p.text }

// Verdict is an evaluation's outcome.
type Verdict int

// The verdicts.
const (
	// Taken: the expression yielded true.
	Taken Verdict = iota
	// Declined: it yielded false.
	Declined
	// Failed: it could not be evaluated over this event (a field the body
	// lacks, a type that does not compare, a value that is not a bool): not
	// taken.
	Failed
	// OverCost: it was stopped at the cost limit: not taken.
	OverCost
)

// String names the verdict, for metrics and logs.
func (v Verdict) String() string {
	switch v {
	case Taken:
		return "taken"
	case Declined:
		return "declined"
	case Failed:
		return "failed"
	default:
		return "over_cost"
	}
}

// Vars are an event's variables, made once per event and evaluated by every
// endpoint's program.
type Vars struct{ m map[string]any }

// NewVars parses ev's body and lays out its variables.
func NewVars(ev Event) Vars {
	var body any
	if len(ev.Body) > 0 && len(ev.Body) <= MaxBody && json.Unmarshal(ev.Body, &body) != nil {
		body = nil
	}
	var data any
	if obj, ok := body.(map[string]any); ok {
		data = obj["data"]
	}
	return Vars{m: map[string]any{"id": ev.ID, "type": ev.Type, "source": ev.Source, "subject": ev.Subject, "time": ev.Time,
		"tenant_id": ev.TenantID, "source_account": ev.SourceAccount, "body": body, "data": data}}
}

// Activation is v as a CEL program's input: the variables Env declares.
func (v Vars) Activation() map[string]any { return v.m }

// IsOverCost says whether err is an evaluation stopped at its cost limit.
func IsOverCost(err error) bool {
	var cancelled interpreter.EvalCancelledError
	return errors.As(err, &cancelled) && cancelled.Cause == interpreter.CostLimitExceeded
}

// Eval evaluates p over v; the error says why when the verdict is Failed
// or OverCost.
func (p *Program) Eval(v Vars) (Verdict, error) {
	out, _, err := p.prg.Eval(v.m)
	if err != nil {
		if IsOverCost(err) {
			return OverCost, err
		}
		return Failed, err
	}
	b, ok := out.Value().(bool)
	switch {
	case !ok:
		return Failed, fmt.Errorf("the expression yielded %s, not a bool", out.Type())
	case b:
		return Taken, nil
	}
	return Declined, nil
}
