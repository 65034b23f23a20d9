package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
)

// serveConfig is the comparator's settings (flags of `river serve`).
type serveConfig struct {
	DatabaseURL, Addr string
	Workers           int
	PoolSize          int
	MaxBatch          int
	FetchCooldown     time.Duration
}

// progress is what GET /stats answers: the jobs committed and those River
// finished (completed, or cancelled for good), which the bench waits to be
// equal before it reads the CPU spent.
type progress struct {
	Inserted atomic.Int64
	Finished atomic.Int64
}

// serve runs the River client and the HTTP server until ctx ends, then
// stops taking requests, commits what is queued, and lets the running jobs
// finish.
func serve(ctx context.Context, log *slog.Logger, cfg serveConfig) error {
	pcfg, err := pgxpool.ParseConfig(cfg.DatabaseURL)
	if err != nil {
		return fmt.Errorf("database url: %w", err)
	}
	pcfg.MaxConns = int32(cfg.PoolSize)
	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer pool.Close()
	sources, err := loadSources(ctx, pool)
	if err != nil {
		return err
	}
	workers := river.NewWorkers()
	river.AddWorker(workers, &grantWorker{pool: pool})
	client, err := river.NewClient(riverpgxv5.New(pool), &river.Config{
		Queues:        map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: cfg.Workers}},
		Workers:       workers,
		FetchCooldown: cfg.FetchCooldown,
		Logger:        log,
	})
	if err != nil {
		return fmt.Errorf("river client: %w", err)
	}
	var p progress
	// Finished jobs are counted from River's own events, sent once their
	// state is stored; the buffer holds more than a window's jobs.
	events, unsubscribe := client.SubscribeConfig(&river.SubscribeConfig{ChanSize: 1 << 20,
		Kinds: []river.EventKind{river.EventKindJobCompleted, river.EventKindJobCancelled}})
	defer unsubscribe()
	go func() {
		for range events {
			p.Finished.Add(1)
		}
	}()
	if err := client.Start(ctx); err != nil {
		return fmt.Errorf("start river: %w", err)
	}
	c := &committer{log: log, pool: pool, river: client, queue: make(chan *delivery, 8192), maxBatch: cfg.MaxBatch,
		inserted: func(n int) { p.Inserted.Add(int64(n)) }}
	committed := make(chan struct{})
	go func() {
		defer close(committed)
		c.run(ctx)
	}()
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/ingest/{source}", c.handle(sources))
	mux.HandleFunc("GET /readyz", func(http.ResponseWriter, *http.Request) {})
	mux.HandleFunc("GET /stats", func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]int64{"inserted": p.Inserted.Load(), "finished": p.Finished.Load()})
	})
	srv := &http.Server{Addr: cfg.Addr, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.ListenAndServe() }()
	select {
	case err := <-served:
		return fmt.Errorf("http: %w", err)
	case <-ctx.Done():
	}
	stopCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// Handlers first (they wait for their commits), then the queue.
	err = srv.Shutdown(stopCtx)
	close(c.queue)
	<-committed
	return errors.Join(err, client.Stop(stopCtx))
}

// loadSources reads the seeded sources once: the comparator serves a fixed
// set, as the bench's round needs.
func loadSources(ctx context.Context, pool *pgxpool.Pool) (map[string]*source, error) {
	rows, err := pool.Query(ctx, `SELECT id::text, tenant_id::text, account, secret FROM sources`)
	if err != nil {
		return nil, fmt.Errorf("sources: %w", err)
	}
	sources := map[string]*source{}
	var s source
	if _, err := pgx.ForEachRow(rows, []any{&s.id, &s.tenant, &s.account, &s.secret}, func() error {
		cp := s
		sources[s.id] = &cp
		return nil
	}); err != nil {
		return nil, fmt.Errorf("sources: %w", err)
	}
	return sources, nil
}
