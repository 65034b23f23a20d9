// Package effects is a binary's effect groups: Sluice's built-in ones
// (credits, subscriptions, installations, verifications, feedback, each
// written on the public effect API alone, one folder each) and the
// binary's own, and the deployment's choice among them. Everything that
// names groups (serve and consume, lag, dead letters, replays, the topics
// created at start, the Kafka ACLs checked), reads their effects (an
// event's trail, reconciliation's lookups), erases them (a tenant's
// erasure) or grants them (each stage's Postgres privileges) reads them
// here.
package effects

import (
	"fmt"
	"slices"
	"strings"

	"github.com/sluicehq/sluice/command/internal/effects/credits"
	"github.com/sluicehq/sluice/command/internal/effects/feedback"
	"github.com/sluicehq/sluice/command/internal/effects/installations"
	"github.com/sluicehq/sluice/command/internal/effects/subscriptions"
	"github.com/sluicehq/sluice/command/internal/effects/verifications"
	"github.com/sluicehq/sluice/effect"
	"github.com/sluicehq/sluice/internal/consumers"
	"github.com/sluicehq/sluice/internal/consumers/groups"
	"github.com/sluicehq/sluice/internal/ingest/reconcile"
	"github.com/sluicehq/sluice/internal/pg"
	"github.com/sluicehq/sluice/schemas"
)

// Builtin are Sluice's own effect groups, in their order.
func Builtin() []effect.Group {
	return []effect.Group{credits.Group(), subscriptions.Group(), installations.Group(), verifications.Group(), feedback.Group()}
}

// Default is a binary with Sluice's built-in groups alone, every one
// running: the deployment of a configuration that names no groups.
func Default() Set {
	s, err := NewSet(Builtin(), nil)
	if err != nil {
		panic(err) // the built-in groups are written to run; their tests say so
	}
	return s
}

// IsZero says whether s was made by no one (a configuration naming no
// groups): every Set NewSet makes has the built-in groups at least.
func (s Set) IsZero() bool { return len(s.all) == 0 }

// reserved are the names of the groups the runtime itself runs.
var reserved = []string{"dispatch", "destinations"}

// Set is the effect groups a binary has and those a deployment runs.
type Set struct {
	all, run []effect.Group
}

// NewSet is the groups of a binary (built-ins first, then its own) and,
// of them, those chosen (by name; none: all). A name given twice, a
// group that cannot run, or a choice naming no group is refused.
func NewSet(all []effect.Group, chosen []string) (Set, error) {
	seen := map[string]bool{}
	for _, g := range all {
		if err := g.Check(); err != nil {
			return Set{}, err
		}
		if seen[g.Name] || slices.Contains(reserved, g.Name) {
			return Set{}, fmt.Errorf("effect group %s: the name is taken", g.Name)
		}
		seen[g.Name] = true
	}
	s := Set{all: all, run: all}
	if len(chosen) == 0 {
		return s, nil
	}
	s.run = nil
	for _, name := range chosen {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		i := slices.IndexFunc(all, func(g effect.Group) bool { return g.Name == name })
		if i < 0 {
			return Set{}, fmt.Errorf("--effect-groups: no effect group %q in this binary (it has %s)", name, strings.Join(s.Names(), ", "))
		}
		if !slices.ContainsFunc(s.run, func(g effect.Group) bool { return g.Name == name }) {
			s.run = append(s.run, all[i])
		}
	}
	return s, nil
}

// Names are the names of every group the binary has.
func (s Set) Names() []string {
	names := make([]string, len(s.all))
	for i, g := range s.all {
		names[i] = g.Name
	}
	return names
}

// Running are the groups the deployment runs.
func (s Set) Running() []effect.Group { return s.run }

// RunningNames are the names of the groups the deployment runs.
func (s Set) RunningNames() []string {
	names := make([]string, len(s.run))
	for i, g := range s.run {
		names[i] = g.Name
	}
	return names
}

// Trails are the running groups' queries of their effects on an object
// (effect.Group.Trail), in their order: an event's trail shows those.
func (s Set) Trails() []string {
	return statements(s.run, func(g effect.Group) string { return g.Trail })
}

// Erasures are the statements deleting a tenant's effects
// (effect.Group.Erase) of every group of the binary, whether the
// deployment runs it or not: a group it stopped running still holds what
// it wrote, in tables its migrations made.
func (s Set) Erasures() []string {
	return statements(s.all, func(g effect.Group) string { return g.Erase })
}

// statements are the statements of gs that have one, in their order.
func statements(gs []effect.Group, of func(effect.Group) string) []string {
	var out []string
	for _, g := range gs {
		if sql := of(g); sql != "" {
			out = append(out, sql)
		}
	}
	return out
}

// Tables are the running groups' tables (effect.Group.Tables) as the
// stages' privileges take them: the consumers write them all, and
// reconciliation reads those of the groups whose projections it looks up
// (reconcile.ReadsGroup).
func (s Set) Tables() pg.EffectTables {
	var t pg.EffectTables
	for _, g := range s.run {
		t.Written = append(t.Written, g.Tables...)
		if reconcile.ReadsGroup(g.Name) {
			t.Read = append(t.Read, g.Tables...)
		}
	}
	return t
}

// Effects are the running groups as the runtime takes them: the topics
// each reads are those its types are published to in cat (and its own
// Topics), its intents under topicPrefix.
func (s Set) Effects(topicPrefix string, cat *schemas.Catalogue) ([]groups.Effect, error) {
	out := make([]groups.Effect, 0, len(s.run))
	for _, g := range s.run {
		topics := TopicsOf(g, cat)
		if len(topics) == 0 {
			return nil, fmt.Errorf("effect group %s: no type of %s is in the event catalogue; add its schemas (command.EventTypes) or name its topics (Group.Topics)",
				g.Name, strings.Join(g.Types, ", "))
		}
		h, _ := g.Runtime(topicPrefix).(consumers.Handler)
		out = append(out, groups.Effect{Name: g.Name, Topics: topics, Handler: h, MaxAttempts: g.MaxAttempts})
	}
	return out, nil
}

// BuiltinEffects are Sluice's own effect groups as the runtime runs them,
// under topicPrefix: what a deployment runs when it chooses none.
func BuiltinEffects(topicPrefix string) ([]groups.Effect, error) {
	cat, err := schemas.Load()
	if err != nil {
		return nil, err
	}
	return Default().Effects(topicPrefix, cat)
}

// TopicsOf are the topic suffixes g reads: those of the catalogue's types
// it takes, then its own Topics, once each.
func TopicsOf(g effect.Group, cat *schemas.Catalogue) []string {
	var topics []string
	add := func(t string) {
		if t != "" && !slices.Contains(topics, t) {
			topics = append(topics, t)
		}
	}
	for _, kind := range cat.Kinds() {
		for _, typ := range cat.Types(kind) {
			if e, ok := cat.Lookup(kind, typ); ok && g.Takes(kind+"."+typ) {
				add(e.Topic)
			}
		}
	}
	slices.Sort(topics) // the catalogue's kinds come in no order
	for _, t := range g.Topics {
		add(t)
	}
	return topics
}
