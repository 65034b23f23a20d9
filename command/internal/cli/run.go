package cli

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"runtime/debug"

	"github.com/sluicehq/sluice/command/internal/pipeline"
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
	tuneGC(f)
	tracing, stopTracing, err := startTracing(ctx, log)
	if err != nil {
		return fmt.Errorf("tracing (OTEL_* environment): %w", err)
	}
	defer stopTracing()
	cfg.Tracing = tracing
	p, err := pipeline.Start(ctx, cfg, log)
	if err != nil {
		return err
	}
	log.Info("sluice running", slog.String("stages", cfg.String()), slog.String("http", p.Addr().String()))
	err = p.Wait()
	log.Info("sluice stopped")
	return err
}

// tuneGC sets the collector for a process whose memory is bounded by its
// buffers (consumer budgets, the relay's in-flight window: about 100 MiB of
// live heap with the defaults) and whose work allocates a little per event.
// The memory limit is the ceiling RSS stays under; below it, a large
// GCPercent lets garbage pile up between collections instead of collecting
// every few MiB, which costs ingest a share of its throughput (make bench
// shows it). GOMEMLIMIT and GOGC still win.
func tuneGC(f RunFlags) {
	if _, set := os.LookupEnv("GOMEMLIMIT"); !set && f.MemoryLimit > 0 {
		debug.SetMemoryLimit(f.MemoryLimit << 20)
	}
	if _, set := os.LookupEnv("GOGC"); !set && f.GCPercent > 0 {
		debug.SetGCPercent(f.GCPercent)
	}
}
