package admin

import (
	"slices"
	"strings"

	"github.com/danielgtaylor/huma/v2"
)

// Presence rules: which of a body's fields must be given, stated in the
// document as JSON Schema says it (oneOf or anyOf of schemas that each
// require one field), so a client and a generator know, and checked at the
// edge (checkEdge) with a refusal that names the fields, before huma's
// validation would say "expected value to match exactly one schema".

// exactlyOne states on s that exactly one of fields is given.
func exactlyOne(s *huma.Schema, fields ...string) *huma.Schema {
	s.OneOf = requireEach(fields)
	return s
}

// atLeastOne states on s that at least one of fields is given.
func atLeastOne(s *huma.Schema, fields ...string) *huma.Schema {
	s.AnyOf = requireEach(fields)
	return s
}

func requireEach(fields []string) []*huma.Schema {
	subs := make([]*huma.Schema, len(fields))
	for i, f := range fields {
		// The property is listed: huma's validation checks only the
		// required fields its schema lists.
		subs[i] = &huma.Schema{Type: huma.TypeObject, Properties: map[string]*huma.Schema{f: {}}, Required: []string{f}}
		subs[i].PrecomputeMessages()
	}
	return subs
}

// presenceFields are the fields a presence rule (oneOf or anyOf) names, or
// nil when group is no presence rule.
func presenceFields(group []*huma.Schema) []string {
	var fields []string
	for _, sub := range group {
		if sub.Type != huma.TypeObject || len(sub.Required) != 1 || len(sub.Properties) > 1 {
			return nil
		}
		fields = append(fields, sub.Required[0])
	}
	return fields
}

// presence refuses a body object breaking s's presence rules.
func presence(reg huma.Registry, s *huma.Schema, v any) []error {
	s = deref(reg, s)
	obj, ok := v.(map[string]any)
	if s == nil || !ok {
		return nil
	}
	given := func(fields []string) int {
		return len(slices.DeleteFunc(slices.Clone(fields), func(f string) bool { _, ok := obj[f]; return !ok }))
	}
	var errs []error
	if fields := presenceFields(s.OneOf); fields != nil && given(fields) != 1 {
		errs = append(errs, detail("body", "name exactly one of "+orList(fields)))
	}
	if fields := presenceFields(s.AnyOf); fields != nil && given(fields) == 0 {
		errs = append(errs, detail("body", "name at least one of "+orList(fields)))
	}
	return errs
}

// orList is "a, b or c".
func orList(fields []string) string {
	if len(fields) < 2 {
		return strings.Join(fields, "")
	}
	return strings.Join(fields[:len(fields)-1], ", ") + " or " + fields[len(fields)-1]
}
