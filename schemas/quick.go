package schemas

import (
	"encoding/json"
	"math/big"
	"reflect"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// The quick check answers the common case, a valid event, without the
// validator's cost: the validator turns every number into a big.Rat and
// allocates a scope per value it visits (a tenth of ingest's CPU and a third
// of its allocations, per accepted event). It is built from the compiled
// schema, so $ref, drafts and defaults mean what the validator says they
// mean, and it knows a subset of the keywords: a schema using any other
// gets no quick check. It answers pass only when the validator would
// accept, fail only when it would refuse; anything else (a number it cannot
// compare as an int64, say) is unsure. Only pass is acted on: everything
// else goes to the validator, which decides and says why.

// verdict is the quick check's answer.
type verdict uint8

const (
	unsure verdict = iota
	pass
	fail
)

// typeSet is a schema's "type" keyword as bits; 0 allows every type.
type typeSet uint8

const (
	tNull typeSet = 1 << iota
	tBoolean
	tNumber
	tInteger
	tString
	tArray
	tObject
)

var typeNames = map[string]typeSet{
	"null": tNull, "boolean": tBoolean, "number": tNumber, "integer": tInteger,
	"string": tString, "array": tArray, "object": tObject,
}

// quick is one compiled schema of the quick check.
type quick struct {
	always verdict // a boolean schema: pass or fail, whatever the value
	types  typeSet
	int64s bool // the plain-int64 rule: a number must be an int64 as written

	ref                 *quick
	allOf, anyOf, oneOf []*quick
	not                 *quick

	consts []any // const or enum: strings, booleans and nulls only

	required       []string
	properties     map[string]*quick
	listed         []property // properties, for walking them without a map iterator
	additional     *quick     // nil: any
	minProps       int
	maxProps       int // -1: none
	items          *quick
	minItems       int
	maxItems       int // -1: none
	minLen, maxLen int // maxLen -1: none
	pattern        jsonschema.Regexp

	// Bounds as int64s; a bound that is no int64 makes every number unsure.
	min, max, exclMin, exclMax *int64
	boundsUnsure               bool
}

type property struct {
	name  string
	check *quick
}

// handled lists the Schema fields the quick check reads (or that only
// annotate); any other field that is set makes a schema unknown to it. A
// field a future version of the validator adds is unknown until it is
// added here.
var handled = []string{
	"DraftVersion", "Location", "Bool", "ID", "Ref", "Anchor", "DynamicAnchor", "RecursiveAnchor",
	"Types", "Enum", "Const", "Not", "AllOf", "AnyOf", "OneOf",
	"MaxProperties", "MinProperties", "Required", "Properties", "AdditionalProperties",
	"MinItems", "MaxItems", "Items2020", "MinLength", "MaxLength", "Pattern",
	"Maximum", "Minimum", "ExclusiveMaximum", "ExclusiveMinimum", "Extensions",
	"Title", "Description", "Default", "Comment", "ReadOnly", "WriteOnly", "Examples", "Deprecated",
}

// compileQuick builds sch's quick check, nil when sch (or a schema it
// refers to) uses a keyword the check does not know.
func compileQuick(sch *jsonschema.Schema) *quick {
	q, ok := (&quickCompiler{seen: map[*jsonschema.Schema]*quick{}}).compile(sch)
	if !ok {
		return nil
	}
	return q
}

type quickCompiler struct {
	seen map[*jsonschema.Schema]*quick // schemas compiled or being compiled ($ref cycles)
}

func (c *quickCompiler) compile(s *jsonschema.Schema) (*quick, bool) {
	if s == nil {
		return nil, true
	}
	if q, ok := c.seen[s]; ok {
		return q, true
	}
	q := &quick{maxProps: -1, maxItems: -1, maxLen: -1}
	c.seen[s] = q
	if s.Bool != nil {
		q.always = fail
		if *s.Bool {
			q.always = pass
		}
		return q, true
	}
	if s.DraftVersion != 2020 || !onlyHandled(s) {
		return nil, false
	}
	for _, ext := range s.Extensions {
		if _, ok := ext.(int64Check); !ok {
			return nil, false
		}
		q.int64s = true
	}
	if s.Types != nil {
		for _, name := range s.Types.ToStrings() {
			q.types |= typeNames[name]
		}
	}
	if !q.constants(s) {
		return nil, false
	}
	if !c.subschemas(q, s) {
		return nil, false
	}
	q.required = s.Required
	setInt(&q.minProps, s.MinProperties)
	setInt(&q.maxProps, s.MaxProperties)
	setInt(&q.minItems, s.MinItems)
	setInt(&q.maxItems, s.MaxItems)
	setInt(&q.minLen, s.MinLength)
	setInt(&q.maxLen, s.MaxLength)
	q.pattern = s.Pattern
	q.bounds(s)
	return q, true
}

// subschemas compiles what s applies to the value or its parts: $ref, not,
// allOf, anyOf, oneOf, properties, additionalProperties, items.
func (c *quickCompiler) subschemas(q *quick, s *jsonschema.Schema) bool {
	var ok bool
	if q.ref, ok = c.compile(s.Ref); !ok {
		return false
	}
	if q.not, ok = c.compile(s.Not); !ok {
		return false
	}
	for _, list := range []struct {
		from []*jsonschema.Schema
		to   *[]*quick
	}{{s.AllOf, &q.allOf}, {s.AnyOf, &q.anyOf}, {s.OneOf, &q.oneOf}} {
		for _, sub := range list.from {
			sq, ok := c.compile(sub)
			if !ok {
				return false
			}
			*list.to = append(*list.to, sq)
		}
	}
	if len(s.Properties) > 0 {
		q.properties = make(map[string]*quick, len(s.Properties))
		for name, sub := range s.Properties {
			if q.properties[name], ok = c.compile(sub); !ok {
				return false
			}
			q.listed = append(q.listed, property{name, q.properties[name]})
		}
	}
	switch a := s.AdditionalProperties.(type) {
	case nil:
	case bool:
		q.additional = &quick{always: fail}
		if a {
			q.additional = nil
		}
	case *jsonschema.Schema:
		if q.additional, ok = c.compile(a); !ok {
			return false
		}
	default:
		return false
	}
	q.items, ok = c.compile(s.Items2020)
	return ok
}

// bounds takes the numeric bounds as int64s; one that is no int64 makes
// every number unsure.
func (q *quick) bounds(s *jsonschema.Schema) {
	for _, b := range []struct {
		from *big.Rat
		to   **int64
	}{{s.Minimum, &q.min}, {s.Maximum, &q.max}, {s.ExclusiveMinimum, &q.exclMin}, {s.ExclusiveMaximum, &q.exclMax}} {
		if b.from == nil {
			continue
		}
		if !b.from.IsInt() || !b.from.Num().IsInt64() {
			q.boundsUnsure = true
			continue
		}
		n := b.from.Num().Int64()
		*b.to = &n
	}
}

// constants takes const or enum, when they hold only what the check
// compares (plainConst); both at once are left to the validator.
func (q *quick) constants(s *jsonschema.Schema) bool {
	if s.Const != nil {
		if !plainConst(*s.Const) {
			return false
		}
		q.consts = []any{*s.Const}
	}
	if s.Enum == nil {
		return true
	}
	if s.Const != nil {
		return false // both: rare enough to leave to the validator
	}
	for _, v := range s.Enum.Values {
		if !plainConst(v) {
			return false
		}
	}
	q.consts = s.Enum.Values
	if q.consts == nil {
		q.consts = []any{} // an empty enum allows nothing
	}
	return true
}

// onlyHandled reports whether every field of s that is set is one the quick
// check handles.
func onlyHandled(s *jsonschema.Schema) bool {
	v := reflect.ValueOf(s).Elem()
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		if f.IsExported() && !slices.Contains(handled, f.Name) && !v.Field(i).IsZero() {
			return false
		}
	}
	return true
}

// plainConst reports whether v is a const the quick check compares: JSON
// text, true, false or null. Numbers compare as rationals in the validator
// (1 equals 1.0), objects and arrays deeply: left to it.
func plainConst(v any) bool {
	switch v.(type) {
	case string, bool, nil:
		return true
	}
	return false
}

func setInt(to *int, from *int) {
	if from != nil {
		*to = *from
	}
}

// check judges v, a value decoded the way ValidateDoc takes it.
func (q *quick) check(v any) verdict {
	if q.always != unsure {
		return q.always
	}
	r := q.local(v)
	if r == fail || !q.applied(v, &r) {
		return fail
	}
	return r
}

// local judges what the schema says of v itself, by v's kind: its type,
// const or enum, and the keywords of its kind.
func (q *quick) local(v any) verdict {
	r := pass
	switch v := v.(type) {
	case nil:
		r.and(q.typeIs(tNull))
	case bool:
		r.and(q.typeIs(tBoolean))
	case string:
		_ = r.and(q.typeIs(tString)) && r.and(q.text(v))
	case json.Number:
		r.and(q.number(v))
	case map[string]any:
		_ = r.and(q.typeIs(tObject)) && r.and(q.object(v))
	case []any:
		_ = r.and(q.typeIs(tArray)) && r.and(q.array(v))
	default:
		return unsure // not a value ValidateDoc is given
	}
	if r != fail {
		r.and(q.constant(v))
	}
	return r
}

// applied judges the schemas applied to v whole ($ref, allOf, anyOf,
// oneOf, not) into r; false once one fails.
func (q *quick) applied(v any, r *verdict) bool {
	if q.ref != nil && !r.and(q.ref.check(v)) {
		return false
	}
	for _, sub := range q.allOf {
		if !r.and(sub.check(v)) {
			return false
		}
	}
	if len(q.anyOf) > 0 && !r.and(q.any(v)) {
		return false
	}
	if len(q.oneOf) > 0 && !r.and(q.one(v)) {
		return false
	}
	return q.not == nil || r.and(negate(q.not.check(v)))
}

func (q *quick) typeIs(t typeSet) verdict {
	if q.types == 0 || q.types&t != 0 {
		return pass
	}
	return fail
}

// constant compares v with the schema's const or enum, which hold only
// strings, booleans and nulls: equal to one passes, anything else fails
// (a number, object or array never equals any of them).
func (q *quick) constant(v any) verdict {
	if q.consts == nil {
		return pass
	}
	for _, c := range q.consts {
		if c == v {
			return pass
		}
	}
	return fail
}

func (q *quick) text(s string) verdict {
	if q.minLen > 0 || q.maxLen >= 0 {
		n := utf8.RuneCountInString(s)
		if n < q.minLen || (q.maxLen >= 0 && n > q.maxLen) {
			return fail
		}
	}
	if q.pattern != nil && !q.pattern.MatchString(s) {
		return fail
	}
	return pass
}

// number judges a number: its type, the plain-int64 rule and the bounds,
// all as an int64. A number that is not one as written (1.5, 1e2, 1.0) is
// unsure wherever it matters: the validator reads it as a rational.
func (q *quick) number(n json.Number) verdict {
	i, err := strconv.ParseInt(string(n), 10, 64)
	isInt := err == nil
	if q.int64s && !isInt {
		return unsure
	}
	switch {
	case q.types == 0 || q.types&tNumber != 0:
	case q.types&tInteger != 0:
		if !isInt {
			return unsure
		}
	default:
		return fail
	}
	return q.within(i, isInt)
}

// within judges a number against the bounds, as an int64 (isInt: it is one
// as written).
func (q *quick) within(i int64, isInt bool) verdict {
	if q.min == nil && q.max == nil && q.exclMin == nil && q.exclMax == nil && !q.boundsUnsure {
		return pass
	}
	if !isInt || q.boundsUnsure {
		return unsure
	}
	if below(i, q.min, q.exclMin) || above(i, q.max, q.exclMax) {
		return fail
	}
	return pass
}

// below: i is under a minimum, or at or under an exclusive one.
func below(i int64, min, exclMin *int64) bool {
	return (min != nil && i < *min) || (exclMin != nil && i <= *exclMin)
}

// above: i is over a maximum, or at or over an exclusive one.
func above(i int64, max, exclMax *int64) bool {
	return (max != nil && i > *max) || (exclMax != nil && i >= *exclMax)
}

func (q *quick) object(m map[string]any) verdict {
	if len(m) < q.minProps || (q.maxProps >= 0 && len(m) > q.maxProps) {
		return fail
	}
	for _, name := range q.required {
		if _, ok := m[name]; !ok {
			return fail
		}
	}
	r := pass
	if q.additional == nil {
		// Only the listed properties need looking at.
		for _, p := range q.listed {
			if v, ok := m[p.name]; ok && !r.and(p.check.check(v)) {
				return fail
			}
		}
		return r
	}
	for name, v := range m {
		sub, ok := q.properties[name]
		if !ok {
			sub = q.additional
		}
		if !r.and(sub.check(v)) {
			return fail
		}
	}
	return r
}

func (q *quick) array(a []any) verdict {
	if len(a) < q.minItems || (q.maxItems >= 0 && len(a) > q.maxItems) {
		return fail
	}
	r := pass
	if q.items != nil {
		for _, v := range a {
			if !r.and(q.items.check(v)) {
				return fail
			}
		}
	}
	return r
}

// any is anyOf: one passing passes, all failing fails.
func (q *quick) any(v any) verdict {
	r := fail
	for _, sub := range q.anyOf {
		switch sub.check(v) {
		case pass:
			return pass
		case unsure:
			r = unsure
		}
	}
	return r
}

// one is oneOf: exactly one passing and the others failing passes, two
// passing or all failing fails.
func (q *quick) one(v any) verdict {
	passed, unsures := 0, 0
	for _, sub := range q.oneOf {
		switch sub.check(v) {
		case pass:
			passed++
		case unsure:
			unsures++
		}
	}
	switch {
	case passed > 1:
		return fail
	case unsures > 0:
		return unsure
	case passed == 1:
		return pass
	}
	return fail
}

// and folds one verdict into r: a fail fails the whole (and stops the
// caller: false), an unsure leaves it unsure unless something fails.
func (r *verdict) and(k verdict) bool {
	switch k {
	case fail:
		*r = fail
		return false
	case unsure:
		*r = unsure
	}
	return true
}

func negate(k verdict) verdict {
	switch k {
	case pass:
		return fail
	case fail:
		return pass
	}
	return unsure
}
