// Command orders is Sluice's command line with the shop's own effect
// group, event types and schema: orders serve, orders migrate, orders lag,
// orders dlq ... (every command sluice has).
package main

import (
	"example.com/orders"

	"github.com/sluicehq/sluice/command"
)

func main() {
	command.Main(command.Groups(orders.Group()), command.EventTypes(orders.Schemas()), command.Migrations(orders.Migrations()))
}
