package command_test

import (
	"os"

	"github.com/sluicehq/sluice/command"
	"github.com/sluicehq/sluice/effect"
)

// A team's binary (usually with its schemas and migrations embedded): Sluice's command line with an effect group of its own,
// the event types it reads and the tables it writes. Its every process
// (serve, consume, migrate, lag, the console) then knows the group.
func Example() {
	orders := effect.Group{
		Name:  "orders",
		Types: []string{"shop.order.placed"},
		// Handler: the group's effects (see the effect package).
	}
	command.Main(
		command.Groups(orders),
		command.EventTypes(os.DirFS("schemas")),    // its JSON Schemas
		command.Migrations(os.DirFS("migrations")), // its goose migrations
	)
}
