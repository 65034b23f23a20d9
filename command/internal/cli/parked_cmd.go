package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/sluicehq/sluice/internal/cdc"
)

// CDCParkedCmd shows and resolves the records the relay parked.
type CDCParkedCmd struct {
	List    CDCParkedListCmd    `cmd:"" help:"List parked records, newest first."`
	Release CDCParkedReleaseCmd `cmd:"" help:"Mark a parked record handled (re-published by a resync, or not needed); it is deleted once released for longer than --payload-horizon."`
	Publish CDCParkedPublishCmd `cmd:"" help:"Publish parked records to Kafka again, oldest first, once their topic exists (one by --id, or all of a --topic); each is released once Kafka acknowledged it."`
}

// CDCParkedListCmd lists parked records.
type CDCParkedListCmd struct {
	Output
	Released bool      `name:"released" help:"Include records already released."`
	Limit    pageLimit `name:"limit" default:"100" help:"At most this many, 1 to 500."`
}

func (c *CDCParkedListCmd) Run(ctx context.Context, g *Globals) error {
	pool, err := g.pool(ctx)
	if err != nil {
		return err
	}
	defer pool.Close()
	parked, err := cdc.ListParked(ctx, pool, c.Released, int(c.Limit))
	if err != nil {
		return err
	}
	if c.Output.Output == "json" {
		if parked == nil {
			parked = []cdc.Parked{}
		}
		return json.NewEncoder(os.Stdout).Encode(map[string]any{"items": parked})
	}
	t := newTable(os.Stdout, "ID\tPARKED\tSLOT\tLSN\tTOPIC\tEVENT\tOUTBOX ID\tRELEASED\tREASON")
	for _, p := range parked {
		t.row(p.ID, p.ParkedAt.UTC().Format(time.RFC3339), p.Slot, p.LSN, p.Topic, p.EventID, p.OutboxID, timeOrDash(p.ReleasedAt), oneLine(p.Reason))
	}
	return t.flush()
}

// CDCParkedReleaseCmd releases a parked record.
type CDCParkedReleaseCmd struct {
	ID int64 `name:"id" required:"" help:"The parked record to release." input:"id"`
}

func (c *CDCParkedReleaseCmd) Run(ctx context.Context, g *Globals, log *slog.Logger) error {
	pool, err := g.pool(ctx)
	if err != nil {
		return err
	}
	defer pool.Close()
	if err := cdc.ReleaseParked(ctx, pool, c.ID); err != nil {
		return err
	}
	log.Info("parked record released", slog.Int64("id", c.ID))
	fmt.Printf("released parked record %d\n", c.ID)
	return nil
}

// CDCParkedPublishCmd publishes parked records again.
type CDCParkedPublishCmd struct {
	Output
	ID    int64  `name:"id" xor:"which" required:"" help:"Publish this parked record." input:"id"`
	Topic string `name:"topic" xor:"which" required:"" help:"Publish every pending parked record of this topic." input:"max=249"`
}

func (c *CDCParkedPublishCmd) Run(ctx context.Context, g *Globals, log *slog.Logger) error {
	kc := g.kafka()
	kc.ClientID = "sluice-parked"
	kafkaOpts, err := kc.Options()
	if err != nil {
		return err
	}
	pool, err := g.pool(ctx)
	if err != nil {
		return err
	}
	defer pool.Close()
	// The CLI audits nothing itself (resync, dead-letter replays and
	// releases log what they did, as here): the log line is the record.
	published, err := cdc.PublishParked(ctx, pool, kafkaOpts, cdc.ParkedSelection{ID: c.ID, Topic: c.Topic})
	for _, id := range published {
		log.Info("parked record published", slog.Int64("id", id))
	}
	if err != nil {
		return err
	}
	if c.Output.Output == "json" {
		return json.NewEncoder(os.Stdout).Encode(map[string]any{"published": len(published), "ids": published})
	}
	_, err = fmt.Printf("published %d parked record(s)\n", len(published))
	return err
}
