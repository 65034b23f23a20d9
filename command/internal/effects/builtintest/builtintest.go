// Package builtintest gives tests the deployment's groups when it chooses
// none: Sluice's built-in effect groups, as the operator layer and the
// runtime take them.
package builtintest

import (
	"testing"

	"github.com/sluicehq/sluice/command/internal/effects"
	"github.com/sluicehq/sluice/internal/consumers/groups"
	"github.com/sluicehq/sluice/internal/envelope"
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
