// Package builtintest gives tests the deployment's groups when it chooses
// none: Sluice's built-in effect groups, as the operator layer, the
// runtime and the stages' privileges take them.
package builtintest

import (
	"testing"

	"github.com/sluicehq/sluice/command/internal/effects"
	"github.com/sluicehq/sluice/internal/consumers/groups"
	"github.com/sluicehq/sluice/internal/envelope"
	"github.com/sluicehq/sluice/internal/pg"
)

// Options are the groups of a deployment under topics running Sluice's
// built-in effect groups.
func Options(tb testing.TB, topics envelope.Topics) groups.Options {
	tb.Helper()
	effects, err := effects.BuiltinEffects(topics.Prefix)
	if err != nil {
		tb.Fatal(err)
	}
	return groups.Options{Effects: effects}
}

// Trails are the built-in groups' queries of their effects on an object,
// which an event's trail shows (operate.Config.Trails).
func Trails() []string { return all().Trails() }

// Tables are the built-in groups' tables as the stages' privileges take
// them: what a deployment running every one of them is granted.
func Tables() pg.EffectTables { return all().Tables() }

// all is the built-in groups, every one running.
func all() effects.Set { return effects.Default() }
