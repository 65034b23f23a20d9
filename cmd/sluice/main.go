// Command sluice runs the Sluice pipeline and administers it. See README.md.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/alecthomas/kong"
	"github.com/sluicehq/sluice/internal/pg"
)

// CLI is the whole command line; kong fills it from flags and environment.
type CLI struct {
	Globals

	Serve      ServeCmd      `cmd:"" help:"Run ingest, the cdc relay and the consumers in one process."`
	Ingest     IngestCmd     `cmd:"" help:"Run only the ingest API."`
	CDC        CDCCmd        `cmd:"" name:"cdc" help:"Run only the cdc relay (one active per slot; others stand by)."`
	Consume    ConsumeCmd    `cmd:"" help:"Run only the consumer groups."`
	Migrate    MigrateCmd    `cmd:"" help:"Apply pending database migrations."`
	Tenant     TenantCmd     `cmd:"" help:"Administer tenants."`
	Source     SourceCmd     `cmd:"" help:"Administer sources (verified webhook senders)."`
	APIKey     APIKeyCmd     `cmd:"" name:"apikey" help:"Administer tenant API keys (POST /v1/events)."`
	AdminToken AdminTokenCmd `cmd:"" name:"admintoken" help:"Administer the admin API's bearer tokens (/admin/v1 on the admin listener)."`
	Workspace  WorkspaceCmd  `cmd:"" help:"Administer workspaces and their provider customers."`
	EventType  EventTypeCmd  `cmd:"" name:"eventtype" help:"Administer tenants' own event types (schemas, versions, release of kept events)."`
	Demo       DemoCmd       `cmd:"" help:"Create a demo tenant and send one signed invoice.paid through a running serve."`
	DLQ        DLQCmd        `cmd:"" name:"dlq" help:"List and replay consumer dead letters."`
	Lag        LagCmd        `cmd:"" help:"Show consumer lag per group and partition (committed, log start and end offsets)."`
	Replay     ReplayCmd     `cmd:"" help:"Rewind a stopped consumer group (dry run unless --execute)."`
	Reconcile  ReconcileCmd  `cmd:"" help:"Ask providers' APIs for events their webhooks never delivered, and enter them like webhooks."`
	Health     HealthCmd     `cmd:"" help:"Exit 0 when a running process answers ready (a container health check)."`
	Erase      EraseCmd      `cmd:"" help:"Erase on request: a tenant's data (offboarding), or payloads mentioning a subject."`
	Lifecycle  LifecycleCmd  `cmd:"" help:"Make one storage lifecycle pass now (partitions ahead, aged ones dropped, expired keys, old reconciliation runs and links deleted)."`
	Docs       DocsCmd       `cmd:"" hidden:"" help:"Write the generated parts of the manual (docs/)."`
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var cli CLI
	k := kong.Parse(&cli,
		kong.Name("sluice"),
		kong.Description("Sluice turns provider webhooks into business effects that happen exactly once."),
		kong.UsageOnError(),
		kong.Help(eitherOrHelp),
		kong.BindTo(ctx, (*context.Context)(nil)),
	)
	log := cli.Globals.logger()
	if err := k.Run(&cli.Globals, log); err != nil {
		fmt.Fprintln(os.Stderr, "sluice:", humane(err, log))
		os.Exit(1)
	}
}

// humane is what a person reads of err. The operations word their own
// errors; what still carries the database's own text (a SQLSTATE, a
// constraint) is a fault no operation foresaw: it is logged at debug level
// and replaced by a sentence.
func humane(err error, log *slog.Logger) string {
	if !pg.IsFromPostgres(err) {
		return err.Error()
	}
	log.Debug("database error", slog.Any("error", err))
	if pg.Classify(err) == pg.FaultTransient {
		return "the database could not answer now; try again (--log-level debug shows its own words)"
	}
	return "the database refused the request (--log-level debug shows its own words)"
}
