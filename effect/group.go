package effect

import (
	"fmt"
	"strings"

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

	// Tables are the tables the group's handler reads and writes, made by
	// the binary's migrations (command.Migrations): "orders", or
	// "shop.orders" in a schema of the team's own. Where each stage
	// connects as a role of its own, `migrate --grant` gives the
	// consumers' role and the admin listener's (which replays dead letters
	// through the handler and reads the tables for trails) SELECT, INSERT,
	// UPDATE and DELETE on them, and USAGE on their schema, for the groups
	// the deployment runs; `doctor`, and every process at start, says what
	// such a role lacks. Without Tables, the migrations must grant them.
	Tables []string
	// Trail, optional, is a query of the group's effects on one object,
	// which the trail of every event about that object shows while the
	// deployment runs the group (`events trail`, the admin API, the
	// console). Its parameters are the event's $1 source id (uuid), $2
	// source account (text), $3 object id (text) and $4 tenant id (uuid):
	// it uses those it needs. It returns a row per effect, with these
	// columns in this order (NULL where the group keeps no such thing):
	//
	//	group           text         the group's Name
	//	kind            text         what the effect is: grant, projection, reservation...
	//	operation       text         the business key's operation; '' for a projection
	//	business_key    text         Record.BusinessKey of the effect, or the projection's key
	//	event_id        text         the event that caused it (a projection's: whose version it holds)
	//	inbox_id        bigint       that event's Envelope.InboxID
	//	workspace_id    text         the Sluice workspace it is for; '' for none
	//	credits         bigint       credits it moved; 0 for none
	//	state           text         a projection's state; '' for none
	//	kafka_topic     text         Record.Topic, Partition and Offset
	//	kafka_partition integer      of the record the group applied
	//	kafka_offset    bigint
	//	processed_at    timestamptz  when it was applied
	//
	// Find the rows by an index (a business key, the projection's key),
	// so a trail costs the same at any volume. The trail shows the
	// deployment endpoint's sends of an intent whose Key is a row's
	// business key beside it.
	Trail string
	// Erase, optional, is a statement deleting every effect of one tenant
	// ($1, its id: uuid) from the group's tables, run by `erase tenant`
	// in its transaction, before Sluice deletes the tenant's own rows
	// (its workspaces and sources, which effects may reference). The rows
	// it reports (its command tag: with WITH ... DELETE, those of the last
	// DELETE) are the effects `erase tenant` says it erased. Erasure runs
	// every group of the binary's, whether the deployment runs it or not:
	// a group stopped still holds what it wrote.
	Erase string
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
	for _, t := range g.Tables {
		if !validTable(t) {
			return fmt.Errorf("effect group %s: table %q: a name of lowercase letters, digits and '_', or schema.name", g.Name, t)
		}
	}
	return nil
}

// Takes says whether the group takes events of type t.
func (g Group) Takes(t string) bool { return endpoints.MatchesAny(g.Types, t) }

// validTable: a table as an unquoted name folds it, in its schema or not,
// so the grants name the table the group's statements do.
func validTable(s string) bool {
	schema, table, qualified := strings.Cut(s, ".")
	if !qualified {
		return identifier(s)
	}
	return identifier(schema) && identifier(table)
}

func identifier(s string) bool {
	if s == "" || len(s) > 63 || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_') {
			return false
		}
	}
	return true
}

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
