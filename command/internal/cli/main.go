// Package cli is Sluice's command line: every subcommand of the sluice
// binary (serve, the stages alone, migrate, the administration commands).
// The public package command runs it; cmd/sluice is Sluice's main, and a
// team's binary is another. See README.md.
package cli

import (
	"context"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/alecthomas/kong"

	"github.com/sluicehq/sluice/effect"
	"github.com/sluicehq/sluice/internal/consumers/groups"
)

// CLI is the whole command line; kong fills it from flags and environment.
type CLI struct {
	Globals

	Serve      ServeCmd      `cmd:"" help:"Run ingest, the cdc relay and the consumers in one process."`
	Ingest     IngestCmd     `cmd:"" help:"Run only the ingest API."`
	CDC        CDCCmd        `cmd:"" name:"cdc" help:"Run only the cdc relay (one active per slot; others stand by)."`
	Consume    ConsumeCmd    `cmd:"" help:"Run only the consumer groups."`
	Migrate    MigrateCmd    `cmd:"" help:"Apply pending database migrations as the schema's owner, and grant each stage's role its privileges (--grant)."`
	Tenant     TenantCmd     `cmd:"" help:"Administer tenants."`
	Source     SourceCmd     `cmd:"" help:"Administer sources (verified webhook senders)."`
	APIKey     APIKeyCmd     `cmd:"" name:"apikey" help:"Administer tenant API keys (POST /v1/events)."`
	AdminToken AdminTokenCmd `cmd:"" name:"admintoken" help:"Administer the admin API's bearer tokens (/admin/v1 on the admin listener)."`
	PortalLink PortalLinkCmd `cmd:"" name:"portallink" help:"Mint portal links: a tenant's own view of the console, for one visitor, once (served on --portal-addr)."`
	Workspace  WorkspaceCmd  `cmd:"" help:"Administer workspaces and their provider customers."`
	EventType  EventTypeCmd  `cmd:"" name:"eventtype" help:"Administer tenants' own event types (schemas, versions, release of kept events)."`
	Endpoint   EndpointCmd   `cmd:"" help:"Administer tenants' endpoints (destinations their events are delivered to)."`
	Delivery   DeliveryCmd   `cmd:"" help:"Deliveries of events to tenants' endpoints: list, show, retry one, replay an endpoint's window."`
	Demo       DemoCmd       `cmd:"" help:"Show every part of Sluice on a demo tenant through a running serve (make run's demo): a grant, a conflict, a dead letter, an event type, an endpoint, a reconciliation run."`
	DLQ        DLQCmd        `cmd:"" name:"dlq" help:"List and replay consumer dead letters."`
	Events     EventsCmd     `cmd:"" help:"Search the inbox; an event's trail and payload (why did an event have, or not have, its effect?)."`
	Conflicts  ConflictsCmd  `cmd:"" help:"List and show conflicting deliveries (an event key sent again with other content)."`
	Audit      AuditCmd      `cmd:"" help:"Read the operators' audit trail (admin API and CLI actions, payload reads)."`
	Lag        LagCmd        `cmd:"" help:"Show consumer lag per group and partition (committed, log start and end offsets)."`
	Replay     ReplayCmd     `cmd:"" help:"Rewind a stopped consumer group (dry run unless --execute)."`
	Reconcile  ReconcileCmd  `cmd:"" help:"Ask providers' APIs for events their webhooks never delivered, and enter them like webhooks."`
	Health     HealthCmd     `cmd:"" help:"Exit 0 when a running process answers ready (a container health check)."`
	Doctor     DoctorCmd     `cmd:"" help:"Check what the deployment needs before it starts (Postgres settings and privileges, the key ring, partitions, Kafka and its topics), read-only."`
	Erase      EraseCmd      `cmd:"" help:"Erase on request: a tenant's data (offboarding), or payloads mentioning a subject."`
	Keys       KeysCmd       `cmd:"" help:"Rotate the key ring sealing stored secrets (SLUICE_SECRET_KEY): re-seal them with its first key, count what each key seals."`
	Lifecycle  LifecycleCmd  `cmd:"" help:"Make one storage lifecycle pass now (partitions ahead, aged ones dropped, expired keys, old reconciliation runs and links deleted)."`
	Version    VersionCmd    `cmd:"" help:"Print the binary's version, its commit and the schema it needs, and the schema the database is at (also sluice --version)."`
	Docs       DocsCmd       `cmd:"" hidden:"" help:"Write the generated parts of the manual (docs/)."`
}

// App is what a binary adds to Sluice's command line (the public package
// command's options say what each part is for).
type App struct {
	Groups     []effect.Group
	EventTypes []fs.FS
	Migrations fs.FS

	name string // what the binary is called: its help and messages say so
}

// Main runs the command line on os.Args for the binary a and exits with
// its exit code; SIGINT and SIGTERM cancel the command's context (serve
// drains).
func Main(a App) {
	a.name = filepath.Base(os.Args[0])
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := execute(ctx, &a, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(int(code))
}

// execute parses args and runs the command they select for the binary a;
// how that ended is the exit code (exit.go decides it). sluice alone
// prints the help.
func execute(ctx context.Context, a *App, args []string, stdout, stderr io.Writer) exitCode {
	var cli CLI
	cli.Globals.app = a
	name := a.name
	if name == "" || name == "." {
		name = "sluice"
	}
	parser, err := kong.New(&cli,
		kong.Name(name),
		kong.Description("Sluice turns provider webhooks into business effects that happen exactly once."),
		kong.Help(groupedHelp),
		kong.Writers(stdout, stderr),
		kong.BindTo(ctx, (*context.Context)(nil)),
		kong.Resolvers(envFiles(os.LookupEnv)),
	)
	if err != nil {
		panic(err) // the grammar above is wrong: a bug of this binary
	}
	if len(args) == 0 {
		args = []string{"--help"}
	}
	if args[0] == "--version" {
		args = append([]string{"version"}, args[1:]...)
	}
	kctx, err := parser.Parse(args)
	if err == nil {
		err = checkEncoding(args) // kong read such bytes as U+FFFD
	}
	if err != nil {
		return misuse(name, err, kctx, args, stdout, stderr)
	}
	log := cli.Globals.logger()
	// The binary's groups and the deployment's choice among them, checked
	// once for every command that names groups.
	if _, err := cli.Globals.groups(groups.Options{}); err != nil {
		return failure(name, kctx, err, stdout, stderr, log)
	}
	if err := kctx.Run(&cli.Globals, log); err != nil {
		return failure(name, kctx, err, stdout, stderr, log)
	}
	return exitOK
}
