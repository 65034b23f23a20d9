package command

import (
	"io/fs"

	"github.com/sluicehq/sluice/effect"
)

// An Option adds a binary's own parts to Sluice's command line; see Main.
type Option func(*app)

// app is what a binary adds: its groups, schema and event types.
type app struct {
	groups     []effect.Group
	eventTypes []fs.FS
	migrations fs.FS
}

// Groups adds effect groups of the binary's own beside Sluice's built-in
// ones. Every command that names groups (serve and consume, lag, dlq,
// replay, the console) then names them too; --effect-groups
// (SLUICE_EFFECT_GROUPS) lists those a deployment runs.
func Groups(gs ...effect.Group) Option {
	return func(a *app) { a.groups = append(a.groups, gs...) }
}

// EventTypes adds event types for the whole deployment: JSON Schemas
// annotated as Sluice's own under schemas/ are (an "x-sluice" object naming
// the kind, the type, the version, the object type and the topic suffix,
// and where the object id and the event time are), at fsys's root or in
// folders. Ingest validates those events and publishes them to their
// topic, where the binary's groups read them, instead of keeping them
// unhandled; a type Sluice already has is refused at start.
func EventTypes(fsys fs.FS) Option {
	return func(a *app) { a.eventTypes = append(a.eventTypes, fsys) }
}

// Migrations adds the binary's own schema: goose migrations
// (NNNNN_what.sql at fsys's root) that `migrate`, and every process
// migrating at start as the schema's owner, apply after Sluice's, recorded
// apart from them (sluice_app_schema_migrations). Its tables live in the
// Sluice database, so a group's effects commit with its bookkeeping; name
// them in the group's Tables, and `migrate --grant` grants the stages'
// roles what they need on them.
func Migrations(fsys fs.FS) Option {
	return func(a *app) { a.migrations = fsys }
}
