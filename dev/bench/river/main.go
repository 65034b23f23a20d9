// Command river is the bench's River comparator: the service Sluice is, built
// the way a competent team would build it on River (github.com/riverqueue/river)
// instead, so that the bench can read Sluice's rate and CPU against it in the
// same shape and on the same machine (the bench's river step).
//
// An HTTP handler verifies the Stripe signature over the raw body and parses
// the event; a group commit stores each batch of concurrent deliveries (an
// inbox row per event key) and inserts their River jobs in the same
// transaction (InsertManyTx). A River worker grants 100 credits per eligible
// invoice under a business-key unique constraint, moves the balance and
// writes the confirmation e-mail's outbox row, all in one statement, so a job
// run twice grants once.
//
// It is a module of its own so that Sluice's go.mod never carries River.
//
//	river migrate -database-url URL -sources sources.json
//	river serve -database-url URL -addr 127.0.0.1:18091 [-workers 100 -pool 40]
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
)

func main() {
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	if err := run(log, os.Args[1:]); err != nil {
		log.Error("river comparator", "err", err)
		os.Exit(1)
	}
}

func run(log *slog.Logger, args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("usage: river migrate|serve [flags]")
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	fs := flag.NewFlagSet(args[0], flag.ContinueOnError)
	var dbURL string
	fs.StringVar(&dbURL, "database-url", "", "Postgres URL of a database of its own")
	switch args[0] {
	case "migrate":
		sources := fs.String("sources", "", "JSON file of the sources to seed, with their customers")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		return migrate(ctx, dbURL, *sources)
	case "serve":
		var cfg serveConfig
		fs.StringVar(&cfg.Addr, "addr", "127.0.0.1:18091", "HTTP listen address")
		fs.IntVar(&cfg.Workers, "workers", 100, "River workers on the default queue (River's documented example)")
		fs.IntVar(&cfg.PoolSize, "pool", 40, "Postgres connections: the workers' statements, River's fetches and completions, the group commit")
		fs.IntVar(&cfg.MaxBatch, "max-batch", 256, "deliveries per group commit at most (Sluice's default)")
		fs.DurationVar(&cfg.FetchCooldown, "fetch-cooldown", 0, "River's FetchCooldown; 0: River's default")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		// The collector as Sluice's processes run it (its --gc-percent
		// default): the comparison is of designs, not of heap settings.
		debug.SetGCPercent(400)
		cfg.DatabaseURL = dbURL
		return serve(ctx, log, cfg)
	}
	return fmt.Errorf("unknown command %q: want migrate or serve", args[0])
}
