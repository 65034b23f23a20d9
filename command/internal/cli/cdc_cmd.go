package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluicehq/sluice/command/internal/operator/operate"
	"github.com/sluicehq/sluice/internal/cdc"
	"github.com/sluicehq/sluice/internal/consumers/groups"
	"github.com/sluicehq/sluice/internal/pg"
	"github.com/sluicehq/sluice/migrations"
)

// CDCCmd groups the relay's commands; `sluice cdc` alone runs the relay.
type CDCCmd struct {
	Relay  CDCRelayCmd  `cmd:"" name:"run" default:"withargs" help:"Run the relay (the default)."`
	Resync CDCResyncCmd `cmd:"" help:"Rebuild a lost or invalidated slot: recreate it and re-publish outbox rows created since --since."`
	Parked CDCParkedCmd `cmd:"" help:"List and release the records Kafka refused for good."`
	Slot   CDCSlotCmd   `cmd:"" help:"Show the relay's replication slot: whether a relay streams from it, the WAL it retains, how far Kafka has everything."`
}

// CDCRelayCmd runs the relay.
type CDCRelayCmd struct{ RunFlags }

func (c *CDCRelayCmd) Run(ctx context.Context, g *Globals, log *slog.Logger) error {
	return run(ctx, g, log, c.RunFlags, false, true, false)
}

// CDCResyncCmd recreates the slot and re-publishes from the outbox table.
type CDCResyncCmd struct {
	Since   time.Time `name:"since" required:"" format:"2006-01-02T15:04:05Z07:00" help:"Re-publish rows created at or after this time (RFC 3339). The relay logs the last time it knows everything was in Kafka."`
	Slot    string    `name:"slot" env:"SLUICE_SLOT" default:"sluice" help:"Logical replication slot of the relay."`
	Migrate bool      `name:"migrate" env:"SLUICE_MIGRATE" default:"true" negatable:"" help:"Apply pending migrations first."`
	Output
}

func (c *CDCResyncCmd) Run(ctx context.Context, g *Globals, log *slog.Logger) error {
	if g.DatabaseURL == "" {
		return errors.New("SLUICE_DATABASE_URL is required")
	}
	kc := g.kafka()
	kc.ClientID = "sluice-resync"
	kafkaOpts, err := kc.Options()
	if err != nil {
		return err
	}
	pool, err := pg.Connect(ctx, g.DatabaseURL, 4)
	if err != nil {
		return err
	}
	defer pool.Close()
	if c.Migrate { // only as the schema's owner; the relay's role checks the version
		if err := pg.MigrateIfOwner(ctx, pool, migrations.FS, pg.Publication, log); err != nil {
			return err
		}
	}
	relay := cdc.New(cdc.Config{DatabaseURL: g.DatabaseURL, Slot: c.Slot}, log.With(slog.String("component", "cdc")), pool, kafkaOpts, prometheus.NewRegistry())
	res, err := relay.Resync(ctx, c.Since)
	if err != nil {
		return fmt.Errorf("resync: %w", err)
	}
	if c.Output.Output == "json" {
		return json.NewEncoder(os.Stdout).Encode(map[string]any{"slot": res.Slot, "lsn": res.LSN.String(),
			"since": res.Since.UTC().Format(time.RFC3339Nano), "published": res.Published})
	}
	fmt.Printf("%d\nrows re-published since %s; slot %s streams from %s\n", res.Published, res.Since.UTC().Format(time.RFC3339), res.Slot, res.LSN)
	return nil
}

// CDCSlotCmd shows the slot's status (operate's, as GET /admin/v1/slot).
type CDCSlotCmd struct {
	Output
	Slot string `name:"slot" env:"SLUICE_SLOT" default:"sluice" help:"Logical replication slot of the relay."`
}

func (c *CDCSlotCmd) Run(ctx context.Context, g *Globals) error {
	pool, err := g.pool(ctx)
	if err != nil {
		return err
	}
	defer pool.Close()
	cfg := g.operateConfig(groups.Options{})
	cfg.Slot = c.Slot
	s, err := operate.New(pool, nil, cfg).Slot(ctx, nil)
	if err != nil {
		return err
	}
	if !s.Exists {
		return printOne(c.Output, s, s.Slot, field{"exists", "no: the relay creates it when it starts; sluice cdc resync rebuilds a lost one"})
	}
	active := "no: no relay streams from it now (WAL piles up while none does)"
	if s.Active {
		active = "yes: a relay streams from it"
	}
	return printOne(c.Output, s, s.Slot, field{"exists", "yes"}, field{"active", active}, field{"wal status", orDash(s.WALStatus)},
		field{"retained wal", fmt.Sprintf("%d bytes", s.LagBytes)}, field{"confirmed lsn", orDash(s.ConfirmedLSN)},
		field{"in kafka as of", timeOrDash(s.ConfirmedTime)})
}
