package endpoints

import (
	"fmt"
	"strings"

	"github.com/sluicehq/sluice/internal/eventfilter"
)

// MaxFilters bounds an endpoint's filters, and MaxFilterLength one filter.
const (
	MaxFilters      = 64
	MaxFilterLength = 200
)

// CheckFilter says whether f is a filter: "*", an event type
// (stripe.invoice.paid, hmac.order.placed) or a prefix of dot-separated
// parts ending in ".*" (stripe.invoice.*), of lowercase letters, digits,
// '_' and '-'.
func CheckFilter(f string) error {
	if f == "*" {
		return nil
	}
	if len(f) > MaxFilterLength {
		return fmt.Errorf("filter %q: longer than %d characters", f, MaxFilterLength)
	}
	name, wild := strings.CutSuffix(f, ".*")
	if name == "" {
		return fmt.Errorf("filter %q: want \"*\", an event type or a prefix ending in \".*\"", f)
	}
	for part := range strings.SplitSeq(name, ".") {
		if part == "" {
			return fmt.Errorf("filter %q: an empty part", f)
		}
		for _, r := range part {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
				if r == '*' && !wild {
					return fmt.Errorf("filter %q: '*' only as the whole filter or its last part (\"stripe.invoice.*\")", f)
				}
				return fmt.Errorf("filter %q: %q is not a lowercase letter, digit, '_' or '-'", f, r)
			}
		}
	}
	return nil
}

// Matches says whether event type t matches filter f ("stripe.invoice.*"
// matches stripe.invoice.paid and stripe.invoice.payment.failed, not
// stripe.invoice itself).
func Matches(f, t string) bool {
	if f == "*" {
		return true
	}
	if prefix, ok := strings.CutSuffix(f, "*"); ok {
		return strings.HasPrefix(t, prefix) && len(t) > len(prefix)
	}
	return f == t
}

// MatchesAny says whether t matches one of filters.
func MatchesAny(filters []string, t string) bool {
	for _, f := range filters {
		if Matches(f, t) {
			return true
		}
	}
	return false
}

// Subscription is an enabled endpoint as the fan-out sees it.
type Subscription struct {
	EndpointID string
	TenantID   string
	Filters    []string
	// Expression is the endpoint's filter expression; empty: none.
	Expression string
	// RulesVersion is the version of the endpoint's rules read: each
	// delivery the fan-out writes names it.
	RulesVersion int64
}

// Candidate is an endpoint whose filters take an event's type: it takes
// the event if it has no Program or its Program yields true.
type Candidate struct {
	EndpointID   string
	Program      *eventfilter.Program
	RulesVersion int64
}

// Index answers "which of a tenant's enabled endpoints take this type?"
// from one read of the subscriptions, each expression compiled once.
type Index struct {
	byTenant map[string][]entry
	// Unusable names the endpoints whose stored expression no longer
	// compiles (one written by another release): they take nothing until
	// it is set again.
	Unusable []error
	// programs are the compiled expressions by their text.
	programs map[string]*eventfilter.Program
}

type entry struct {
	Subscription
	prg      *eventfilter.Program
	unusable bool
}

// NewIndex indexes subs by tenant and compiles their expressions, each
// text once: a program prev (the index it replaces; nil: none) compiled
// for the same text is reused, so a read of unchanged endpoints compiles
// nothing (compiling costs far more than evaluating).
func NewIndex(subs []Subscription, prev *Index) *Index {
	ix := &Index{byTenant: make(map[string][]entry), programs: map[string]*eventfilter.Program{}}
	for _, s := range subs {
		e := entry{Subscription: s}
		if s.Expression != "" {
			e.prg = ix.programs[s.Expression]
			if e.prg == nil && prev != nil {
				e.prg = prev.programs[s.Expression]
			}
			if e.prg == nil {
				prg, err := eventfilter.Compile(s.Expression)
				if err != nil {
					ix.Unusable = append(ix.Unusable, fmt.Errorf("endpoint %s: %w", s.EndpointID, err))
					e.unusable = true
				}
				e.prg = prg
			}
			if e.prg != nil {
				ix.programs[s.Expression] = e.prg
			}
		}
		ix.byTenant[s.TenantID] = append(ix.byTenant[s.TenantID], e)
	}
	return ix
}

// Match appends to dst the endpoints of tenant whose filters take type t,
// with the expression each must still hold.
func (ix *Index) Match(dst []Candidate, tenant, t string) []Candidate {
	for _, s := range ix.byTenant[tenant] {
		if !s.unusable && MatchesAny(s.Filters, t) {
			dst = append(dst, Candidate{EndpointID: s.EndpointID, Program: s.prg, RulesVersion: s.RulesVersion})
		}
	}
	return dst
}

// Any says whether one of tenant's enabled endpoints takes type t, by type
// alone: an expression is judged at fan-out, over the event.
func (ix *Index) Any(tenant, t string) bool {
	for _, s := range ix.byTenant[tenant] {
		if MatchesAny(s.Filters, t) {
			return true
		}
	}
	return false
}
