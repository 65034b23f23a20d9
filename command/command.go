// Package command is Sluice's command line, for a binary of a team's own:
// the sluice binary's every subcommand (serve, the stages alone, migrate,
// the administration commands) with the team's effect groups, event types
// and schema beside Sluice's. Sluice's own binary (cmd/sluice) is
//
//	func main() { command.Main() }
//
// and a team's adds its parts (docs/effects.md walks through one):
//
//	func main() {
//		command.Main(
//			command.Groups(orders.Group()),
//			command.EventTypes(orders.Schemas),
//			command.Migrations(orders.Migrations),
//		)
//	}
package command

import (
	"io/fs"

	"github.com/sluicehq/sluice/command/internal/cli"
	"github.com/sluicehq/sluice/effect"
)

// Version is the release this package belongs to (Semantic Versioning;
// -dev between releases). CHANGELOG.md says what each release asks of an
// operator.
const Version = cli.Version

// Main runs the command line on os.Args and exits with its exit code;
// SIGINT and SIGTERM cancel the command's context (serve drains). Its
// options add the binary's own parts.
func Main(opts ...Option) {
	var a cli.App
	for _, o := range opts {
		o.apply(&a)
	}
	cli.Main(a)
}

// An Option adds a binary's own parts to Sluice's command line; see Main.
type Option struct{ apply func(*cli.App) }

// Groups adds effect groups of the binary's own beside Sluice's built-in
// ones. Every command that names groups (serve and consume, lag, dlq,
// replay, the console) then names them too; --effect-groups
// (SLUICE_EFFECT_GROUPS) lists those a deployment runs.
func Groups(gs ...effect.Group) Option {
	return Option{func(a *cli.App) { a.Groups = append(a.Groups, gs...) }}
}

// EventTypes adds event types for the whole deployment: JSON Schemas
// annotated as Sluice's own under schemas/ are (an "x-sluice" object naming
// the kind, the type, the version, the object type and the topic suffix,
// and where the object id and the event time are), at fsys's root or in
// folders. Ingest validates those events and publishes them to their
// topic, where the binary's groups read them, instead of keeping them
// unhandled; a type Sluice already has is refused at start.
func EventTypes(fsys fs.FS) Option {
	return Option{func(a *cli.App) { a.EventTypes = append(a.EventTypes, fsys) }}
}

// Migrations adds the binary's own schema: goose migrations
// (NNNNN_what.sql at fsys's root) that `migrate`, and every process
// migrating at start as the schema's owner, apply after Sluice's, recorded
// apart from them (sluice_app_schema_migrations). Its tables live in the
// Sluice database, so a group's effects commit with its bookkeeping; name
// them in the group's Tables, and `migrate --grant` grants the stages'
// roles what they need on them.
func Migrations(fsys fs.FS) Option {
	return Option{func(a *cli.App) { a.Migrations = fsys }}
}
