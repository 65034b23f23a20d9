package provider

import (
	"errors"
	"fmt"
	"slices"
)

// Registry is the set of kinds one process knows, chosen once by what
// assembles the process (the command line: kinds.Builtin, the shipped
// kinds) and handed to every store and stage, none of which picks one of
// its own. It is immutable: With returns a new one, so a test can add a
// kind without touching anyone's. A nil *Registry holds no kinds.
type Registry struct {
	byKind map[Kind]Provider
	kinds  []Kind // in registration order, for help and errors
}

// NewRegistry holds ps; two providers of one kind, an empty kind or the api
// kind are refused.
func NewRegistry(ps ...Provider) (*Registry, error) {
	return (&Registry{}).With(ps...)
}

// With returns a registry holding r's providers and ps.
func (r *Registry) With(ps ...Provider) (*Registry, error) {
	if r == nil {
		r = &Registry{}
	}
	out := &Registry{byKind: make(map[Kind]Provider, len(r.kinds)+len(ps)), kinds: slices.Clone(r.kinds)}
	for k, p := range r.byKind {
		out.byKind[k] = p
	}
	for _, p := range ps {
		k := p.Kind()
		switch _, taken := out.byKind[k]; {
		case k == "":
			return nil, errors.New("provider: a provider needs a kind")
		case k == KindAPI:
			return nil, fmt.Errorf("provider: kind %q is reserved for first-party events", k)
		case taken:
			return nil, fmt.Errorf("provider: kind %q registered twice", k)
		}
		out.byKind[k] = p
		out.kinds = append(out.kinds, k)
	}
	return out, nil
}

// Get returns the provider of a kind.
func (r *Registry) Get(k Kind) (Provider, bool) {
	if r == nil {
		return nil, false
	}
	p, ok := r.byKind[k]
	return p, ok
}

// Lookup returns the provider of a kind, or an error naming the known ones.
func (r *Registry) Lookup(k Kind) (Provider, error) {
	if p, ok := r.Get(k); ok {
		return p, nil
	}
	return nil, fmt.Errorf("unknown source kind %q (want one of %v)", k, r.Kinds())
}

// Kinds lists the registered kinds in registration order.
func (r *Registry) Kinds() []Kind {
	if r == nil {
		return nil
	}
	return slices.Clone(r.kinds)
}
