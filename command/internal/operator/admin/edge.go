package admin

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/danielgtaylor/huma/v2"

	"github.com/sluicehq/sluice/command/internal/operator/input"
	"github.com/sluicehq/sluice/internal/refusal"
)

// The edge: the input rules of internal/operator/input, stated in the
// document and checked before anything else sees a request.
//
// Every text an operation reads (a path, query or header parameter, a body
// field) is stated as input.TextPattern (a body field's as
// input.ValuePattern: not only spaces) with a maxLength (input.MaxText
// unless its field says less or more) and a minLength of 1, unless it
// declares a format, an enum or a pattern of its own; a format uuid gets
// input.UUIDPattern besides, since huma's uuid format alone reads
// urn:uuid:, braces, bare hex and upper case. stateInputRules writes that
// into the operation's schemas once, when it is registered, so the
// document and huma's validation say one thing. checkEdge then does what a
// schema cannot say: bytes that are no UTF-8, a parameter given empty, a
// body field given null, and the path parameters; and the body's presence
// rules (presence.go), in words naming the fields, checked before a scoped
// token's owner look-up needs them.

// maxRequestBody bounds a request body (huma's own default).
const maxRequestBody = 1 << 20

// stateInputRules applies the input rules to the schemas of op, as
// registered in a's document.
func (a *API) stateInputRules(op *huma.Operation) {
	reg := a.api.OpenAPI().Components.Schemas
	for _, p := range op.Parameters {
		ruleText(p.Schema, input.TextPattern, input.TextPatternDescription)
		p.Schema.PrecomputeMessages()
	}
	if op.RequestBody == nil {
		return
	}
	seen := map[*huma.Schema]bool{}
	for _, mt := range op.RequestBody.Content {
		walkSchema(reg, mt.Schema, seen, func(s *huma.Schema) {
			ruleText(s, input.ValuePattern, input.ValuePatternDescription)
			s.PrecomputeMessages()
		})
	}
}

// ruleText states the text and uuid rules on a string schema that has no
// rule of its own: text is pattern (a body's fields are values a person
// gives, never only spaces; a parameter's, a filter or a cursor, text).
func ruleText(s *huma.Schema, pattern, description string) {
	if s == nil || s.Type != huma.TypeString || len(s.Enum) > 0 || s.Pattern != "" {
		return
	}
	switch s.Format {
	case "uuid":
		s.Pattern, s.PatternDescription = input.UUIDPattern, input.UUIDPatternDescription
	case "":
		s.Pattern, s.PatternDescription = pattern, description
		if s.MinLength != nil && *s.MinLength == 0 {
			// Empty is a value here (a description cleared): spaces too.
			s.Pattern, s.PatternDescription = input.TextPattern, input.TextPatternDescription
		}
		if s.MaxLength == nil {
			s.MaxLength = ptr(input.MaxText)
		}
	default:
		return // a date-time, a URI: the format is the rule
	}
	if s.MinLength == nil {
		s.MinLength = ptr(1)
	}
}

func ptr[T any](v T) *T { return &v }

// walkSchema calls fn on s and every schema inside it, references
// followed, each once.
func walkSchema(reg huma.Registry, s *huma.Schema, seen map[*huma.Schema]bool, fn func(*huma.Schema)) {
	s = deref(reg, s)
	if s == nil || seen[s] {
		return
	}
	seen[s] = true
	fn(s)
	for _, p := range s.Properties {
		walkSchema(reg, p, seen, fn)
	}
	walkSchema(reg, s.Items, seen, fn)
	if ap, ok := s.AdditionalProperties.(*huma.Schema); ok {
		walkSchema(reg, ap, seen, fn)
	}
	for _, group := range [][]*huma.Schema{s.OneOf, s.AnyOf, s.AllOf} {
		for _, sub := range group {
			walkSchema(reg, sub, seen, fn)
		}
	}
}

// checkEdge checks what the schemas cannot say, and the path parameters:
// it returns the problems (none: the request goes on) and the context the
// operation reads its body from, the body read once here.
func (a *API) checkEdge(hc huma.Context, op *huma.Operation) (huma.Context, []error) {
	if errs := a.checkParams(hc, op); len(errs) > 0 || op.RequestBody == nil {
		return hc, errs
	}
	body, err := io.ReadAll(io.LimitReader(hc.BodyReader(), maxRequestBody+1))
	switch {
	case err != nil:
		return hc, []error{huma.Error400BadRequest("cannot read the request body")}
	case len(body) > maxRequestBody:
		return hc, []error{huma.Error413RequestEntityTooLarge(fmt.Sprintf("the body is over %d bytes", maxRequestBody))}
	}
	var errs []error
	var parsed any
	if json.Unmarshal(body, &parsed) == nil {
		for _, mt := range op.RequestBody.Content {
			errs = append(errs, nulls(a.api.OpenAPI().Components.Schemas, mt.Schema, parsed, "body")...)
			errs = append(errs, presence(a.api.OpenAPI().Components.Schemas, mt.Schema, parsed)...)
		}
	}
	return withBody{hc, body}, errs
}

// checkParams refuses a parameter that is no UTF-8 or given empty, and a
// path or header parameter its schema refuses.
func (a *API) checkParams(hc huma.Context, op *huma.Operation) []error {
	var errs []error
	u := hc.URL()
	query := u.Query()
	for _, p := range op.Parameters {
		loc := p.In + "." + p.Name
		raw, given := paramValue(hc, query, p)
		switch {
		case !given:
		case raw == "":
			errs = append(errs, detail(loc, "is empty: give a value, or leave it out"))
		case !utf8.ValidString(raw):
			errs = append(errs, detail(loc, "is not valid UTF-8"))
		case p.In == "path", p.In == "header":
			errs = append(errs, a.checkValue(loc, p.Schema, raw)...)
		}
	}
	return errs
}

// paramValue is the raw value of p, and whether the request gives it at
// all (a path parameter always is).
func paramValue(hc huma.Context, query url.Values, p *huma.Param) (string, bool) {
	switch p.In {
	case "path":
		return hc.Param(p.Name), true
	case "query":
		vs, given := query[p.Name]
		if !given || len(vs) == 0 {
			return "", given
		}
		return vs[0], true
	case "header":
		return hc.Header(p.Name), hasHeader(hc, p.Name)
	}
	return "", false
}

// hasHeader reports whether the request carries header name, empty or not.
func hasHeader(hc huma.Context, name string) bool {
	found := false
	hc.EachHeader(func(n, _ string) { found = found || strings.EqualFold(n, name) })
	return found
}

func detail(loc, msg string) error { return &huma.ErrorDetail{Location: loc, Message: msg} }

// checkValue validates one path or header parameter by its schema.
func (a *API) checkValue(loc string, s *huma.Schema, raw string) []error {
	var v any = raw
	if s.Type == huma.TypeInteger {
		n, err := strconv.ParseInt(raw, 10, 64)
		if err != nil {
			return []error{&huma.ErrorDetail{Location: loc, Message: "expected a whole number", Value: raw}}
		}
		v = n
	}
	pb := huma.NewPathBuffer([]byte(loc), len(loc))
	res := &huma.ValidateResult{}
	huma.Validate(a.api.OpenAPI().Components.Schemas, s, pb, huma.ModeWriteToServer, v, res)
	return res.Errors
}

// nulls reports the fields of v given null where s does not allow it:
// huma's validation takes a null for an absent field, which would make
// "reason": null mean "any reason".
func nulls(reg huma.Registry, s *huma.Schema, v any, loc string) []error {
	s = deref(reg, s)
	if s == nil {
		return nil
	}
	var errs []error
	check := func(sub *huma.Schema, fv any, at string) {
		sub = deref(reg, sub)
		if fv == nil && sub != nil && !sub.Nullable && sub.Type != "" {
			errs = append(errs, detail(at, "is null: give a value, or leave it out"))
			return
		}
		errs = append(errs, nulls(reg, sub, fv, at)...)
	}
	switch v := v.(type) {
	case map[string]any:
		for k, fv := range v {
			if ps, ok := s.Properties[k]; ok {
				check(ps, fv, loc+"."+k)
			}
		}
	case []any:
		for i, item := range v {
			check(s.Items, item, fmt.Sprintf("%s[%d]", loc, i))
		}
	}
	return errs
}

// deref follows a schema's references.
func deref(reg huma.Registry, s *huma.Schema) *huma.Schema {
	for s != nil && s.Ref != "" {
		s = reg.SchemaFromRef(s.Ref)
	}
	return s
}

// withBody is a request whose body was read at the edge.
type withBody struct {
	humaContext
	body []byte
}

type humaContext = huma.Context

func (c withBody) BodyReader() io.Reader { return bytes.NewReader(c.body) }

// Unwrap lets the adapter reach the request beneath (humagin.Unwrap).
func (c withBody) Unwrap() huma.Context { return c.humaContext }

// jsonFormat is the one body format: JSON that must be UTF-8, read with
// refusals in words (a field's name and what it takes) instead of Go's.
var jsonFormat = huma.Format{
	Marshal: huma.DefaultJSONFormat.Marshal,
	Unmarshal: func(data []byte, v any) error {
		if !utf8.Valid(data) {
			return errors.New("the body is not valid UTF-8")
		}
		err := json.Unmarshal(integralNumbers(data), v)
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			field := te.Field
			if field == "" {
				field = "the body"
			}
			return fmt.Errorf("%s: expected %s, got %s", field, kindOf(te.Type), te.Value)
		}
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return fmt.Errorf("the body is not JSON (at byte %d)", se.Offset)
		}
		return err
	},
}

// integralNumbers writes every number of a JSON text that is a whole
// number written with a fraction or an exponent (10.0, 1e3) as the
// integer it is: JSON Schema's integer is any number without a fractional
// part, so the document's integer fields take them, and Go's decoder
// would refuse them. Anything else, strings included, is left byte for
// byte; a number beyond 2^53 keeps its spelling (a float cannot say which
// integer it is).
func integralNumbers(data []byte) []byte {
	if !bytes.ContainsAny(data, ".eE") {
		return data
	}
	out := make([]byte, 0, len(data))
	for i := 0; i < len(data); {
		switch c := data[i]; {
		case c == '"':
			j := stringEnd(data, i)
			out = append(out, data[i:j]...)
			i = j
		case c == '-' || c >= '0' && c <= '9':
			j := i
			for j < len(data) && strings.IndexByte("+-0123456789.eE", data[j]) >= 0 {
				j++
			}
			if whole, ok := wholeNumber(data[i:j]); ok {
				out = append(out, whole...)
			} else {
				out = append(out, data[i:j]...)
			}
			i = j
		default:
			out = append(out, c)
			i++
		}
	}
	return out
}

// stringEnd is the index after the JSON string that starts at data[i].
func stringEnd(data []byte, i int) int {
	for j := i + 1; j < len(data); j++ {
		switch data[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(data)
}

// wholeNumber is the integer spelling of a number token written with a
// fraction or an exponent whose value is whole and exact in a float.
func wholeNumber(tok []byte) (string, bool) {
	if !bytes.ContainsAny(tok, ".eE") {
		return "", false
	}
	f, err := strconv.ParseFloat(string(tok), 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return "", false
	}
	return strconv.FormatInt(int64(f), 10), true
}

// kindOf names a Go type as a JSON value a person would send.
func kindOf(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number (no fraction, no exponent) within the field's bounds"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return strings.ToLower(t.Kind().String())
}

// checkJSONText refuses free-form JSON (settings, a schema) holding NUL,
// as a problem at loc.
func checkJSONText(loc string, raw []byte) []error {
	if err := input.JSONText(loc, raw); err != nil {
		r, _ := refusal.Of(err)
		return []error{&huma.ErrorDetail{Location: loc, Message: r.Message}}
	}
	return nil
}

// checkRange refuses since at or after until, as a problem at loc.
func checkRange(loc string, since, until time.Time) []error {
	if err := input.Range(since, until); err != nil {
		return []error{&huma.ErrorDetail{Location: loc, Message: "must be after since"}}
	}
	return nil
}

// writeEdgeProblem answers the problems checkEdge found.
func writeEdgeProblem(api huma.API, hc huma.Context, errs []error) {
	var se huma.StatusError
	if errors.As(errs[0], &se) {
		_ = huma.WriteErr(api, hc, se.GetStatus(), se.Error())
		return
	}
	_ = huma.WriteErr(api, hc, http.StatusUnprocessableEntity, "validation failed", errs...)
}

// problemStatus is the status of the problems checkEdge found: the first
// one's own (400, 413), or 422.
func problemStatus(errs []error) int {
	var se huma.StatusError
	if errors.As(errs[0], &se) {
		return se.GetStatus()
	}
	return http.StatusUnprocessableEntity
}
