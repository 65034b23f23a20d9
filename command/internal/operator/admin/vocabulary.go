package admin

import (
	"fmt"
	"reflect"

	"github.com/danielgtaylor/huma/v2"

	"github.com/sluicehq/sluice/command/internal/operator/admintoken"
	"github.com/sluicehq/sluice/command/internal/operator/operate"
	"github.com/sluicehq/sluice/internal/audit"
	"github.com/sluicehq/sluice/internal/provider"
	"github.com/sluicehq/sluice/internal/store/catalog"
	"github.com/sluicehq/sluice/internal/store/inbox"
)

// The deployment's vocabularies in the document: the values of a field
// that are no Go type's but the deployment's (the provider registry's
// kinds, the catalogue's resource types) are stated as an enum on the
// registered schema of its body, once the operation is registered, so the
// document says which values are valid and huma's validation refuses the
// others with the same words (422) before a store sees them.

// stateEnum states values as the only ones field of T may take. The
// field's text rule (edge.go) gives way: the enum is the rule.
func stateEnum[T any](a *API, field string, values []string) {
	reg := a.api.OpenAPI().Components.Schemas
	s := deref(reg, reg.Schema(reflect.TypeFor[T](), false, ""))
	p := deref(reg, s.Properties[field])
	if p == nil || p.Type != huma.TypeString {
		panic(fmt.Sprintf("admin: %s has no text field %q to state an enum on", reflect.TypeFor[T](), field)) // a bug of this package
	}
	p.Enum = make([]any, len(values))
	for i, v := range values {
		p.Enum[i] = v
	}
	p.Pattern, p.PatternDescription, p.MinLength, p.MaxLength = "", "", nil, nil
	p.PrecomputeMessages()
}

// stateVocabularies states, on the answers' schemas, the enums of the
// vocabularies they carry (a client generator makes them types): an
// answer outside one fails the tests' validation of every answer.
func (a *API) stateVocabularies() {
	reg := a.api.OpenAPI().Components.Schemas
	for _, v := range []struct {
		schemas []string
		field   string
		values  []string
	}{
		{[]string{"Token", "TokenCreated"}, "role", []string{string(admintoken.RoleRead), string(admintoken.RoleOperate)}},
		{[]string{"Source"}, "kind", kindNames(a.providers(), catalog.KindAPI)},
		{[]string{"Event"}, "status", []string{string(inbox.StatusPublished), string(inbox.StatusUnhandled), string(inbox.StatusQuarantined), string(inbox.StatusWaiting)}},
		{[]string{"Entry"}, "outcome", audit.Outcomes()},
		{[]string{"Payload"}, "state", []string{string(operate.PayloadKept), string(operate.PayloadExpired), string(operate.PayloadErased)}},
	} {
		for _, name := range v.schemas {
			s := reg.Map()[name]
			if s == nil || s.Properties[v.field] == nil || s.Properties[v.field].Type != huma.TypeString {
				continue // a group this API was not given (operate's, the catalogue's)
			}
			p := s.Properties[v.field]
			p.Enum = make([]any, len(v.values))
			for i, value := range v.values {
				p.Enum[i] = value
			}
			p.PrecomputeMessages()
		}
	}
}

// providers is the registry the tenancy store creates sources with.
func (a *API) providers() *provider.Registry { return a.cfg.Store.Providers }

// kindNames are the names of reg's kinds, after those of extra.
func kindNames(reg *provider.Registry, extra ...string) []string {
	names := append([]string{}, extra...)
	for _, k := range reg.Kinds() {
		names = append(names, string(k))
	}
	return names
}
