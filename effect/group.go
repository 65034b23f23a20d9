package effect

import (
	"fmt"

	"github.com/sluicehq/sluice/internal/store/endpoints"
)

// Group is a consumer group of a binary's own: the event types it takes
// and the handler that applies them, run by Sluice's command line beside
// its built-in groups (command.Groups).
//
// Order is per Kafka key, the resource: one worker per partition applies
// a resource's records in the order Sluice accepted them, and partitions
// run in parallel. An effect that depends on several resources must not
// count on their relative order; a projection must not count even on its
// own (providers send out of order): guard it with a version (Project).
type Group struct {
	// Name is the group's name: its Kafka consumer group id is
	// <prefix>.<Name> (sluice.orders), its dead letters go to
	// <prefix>.<Name>.dlq, and both stay across releases so lag tools and
	// replays follow them. Lowercase letters, digits, '-' and '_'; never a
	// built-in group's name.
	Name string
	// Types are the event types the group takes: exact names
	// (hmac.order.placed) or a prefix of dot-separated parts ending in
	// ".*" (hmac.order.*), as tenants' endpoint filters are written. The
	// group reads the topics these types are published to; records of
	// other types there never reach its handler.
	Types []string
	// Handler applies the group's records: Each for a function per
	// record, or a set-based Handler of your own.
	Handler Handler
	// MaxAttempts is how often a record that fails for good is tried
	// before it becomes a dead letter. Default 1: the same record against
	// the same data fails the same way, and each further attempt is the
	// partition's other tenants' time; a dead letter is replayed once its
	// cause is fixed (sluice dlq replay).
	MaxAttempts int
	// Topics are topic suffixes the group reads beyond the ones its Types
	// are published to (sluice.<suffix>); rarely needed.
	Topics []string
}

// Check says whether g can run: a name, at least one type, well-formed
// patterns and a handler.
func (g Group) Check() error {
	if !validName(g.Name) {
		return fmt.Errorf("effect group %q: a name of lowercase letters, digits, '-' and '_', at most 64", g.Name)
	}
	if len(g.Types) == 0 {
		return fmt.Errorf("effect group %s: no event types", g.Name)
	}
	for _, t := range g.Types {
		if t == "*" {
			return fmt.Errorf("effect group %s: \"*\" would read every topic; name the types", g.Name)
		}
		if err := endpoints.CheckFilter(t); err != nil {
			return fmt.Errorf("effect group %s: %w", g.Name, err)
		}
	}
	if g.Handler == nil {
		return fmt.Errorf("effect group %s: no handler", g.Name)
	}
	if g.MaxAttempts < 0 {
		return fmt.Errorf("effect group %s: MaxAttempts below zero", g.Name)
	}
	return nil
}

// Takes says whether the group takes events of type t.
func (g Group) Takes(t string) bool { return endpoints.MatchesAny(g.Types, t) }

func validName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}
