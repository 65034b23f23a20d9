package main

import (
	"context"
	"log/slog"
	"os"
	"runtime/debug"
)

// ServeCmd runs every stage.
type ServeCmd struct{ RunFlags }

// IngestCmd runs the ingest API.
type IngestCmd struct{ RunFlags }

// ConsumeCmd runs the consumer groups.
type ConsumeCmd struct{ RunFlags }

func (c *ServeCmd) Run(ctx context.Context, g *Globals, log *slog.Logger) error {
	return run(ctx, g, log, c.RunFlags, true, true, true)
}

func (c *IngestCmd) Run(ctx context.Context, g *Globals, log *slog.Logger) error {
	return run(ctx, g, log, c.RunFlags, true, false, false)
}

func (c *ConsumeCmd) Run(ctx context.Context, g *Globals, log *slog.Logger) error {
	return run(ctx, g, log, c.RunFlags, false, false, true)
}

func run(ctx context.Context, g *Globals, log *slog.Logger, f RunFlags, ingest, cdc, consume bool) error {
	cfg, err := g.pipelineConfig(f)
	if err != nil {
		return err
	}
	cfg.Ingest, cfg.CDC, cfg.Consume = ingest, cdc, consume
	// Sluice's buffers are bounded (consumer budgets, the relay's in-flight
	// window), about 100 MiB of live heap in all; without a limit the
	// collector lets the heap reach twice that before it runs.
	if _, set := os.LookupEnv("GOMEMLIMIT"); !set && f.MemoryLimit > 0 {
		debug.SetMemoryLimit(f.MemoryLimit << 20)
	}
	p, err := startPipeline(ctx, cfg, log)
	if err != nil {
		return err
	}
	log.Info("sluice running", slog.String("stages", cfg.String()), slog.String("http", p.Addr().String()))
	err = p.Wait()
	log.Info("sluice stopped")
	return err
}
