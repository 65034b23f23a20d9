package main

// The pipeline assembles Sluice's stages into one process: ingest, the cdc
// relay and the consumer groups, each optional, sharing one Postgres pool,
// one metrics registry and one HTTP listener. `sluice serve` runs all of
// them; `sluice ingest|cdc|consume` run one. The stages never import each
// other: they meet only here, at the top, and in Postgres and Kafka.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicehq/sluice/cdc"
	"github.com/sluicehq/sluice/consumers"
	"github.com/sluicehq/sluice/consumers/dispatch"
	"github.com/sluicehq/sluice/consumers/groups"
	"github.com/sluicehq/sluice/ingest"
	"github.com/sluicehq/sluice/internal/envelope"
	"github.com/sluicehq/sluice/internal/kafka"
	"github.com/sluicehq/sluice/internal/keyring"
	"github.com/sluicehq/sluice/internal/ops"
	"github.com/sluicehq/sluice/internal/pg"
	"github.com/sluicehq/sluice/internal/tenancy"
	"github.com/sluicehq/sluice/schemas"
)

// pipelineConfig is one process's configuration.
type pipelineConfig struct {
	DatabaseURL string
	Kafka       kafka.Config
	SecretKey   string
	HTTPAddr    string
	TLSCert     string
	TLSKey      string
	Topics      envelope.Topics
	TopicSpec   kafka.TopicSpec
	// Which stages run here.
	Ingest, CDC, Consume bool
	// Migrate applies pending migrations at start.
	Migrate bool

	IngestConfig ingest.Config
	CDCConfig    cdc.Config
	// ConsumerMaxAttempts, ConsumerBackoff, ConsumerBuffer (bytes) and
	// ConsumerTransactions tune every group.
	ConsumerMaxAttempts  int
	ConsumerBuffer       int64
	ConsumerTransactions int
	ConsumerBackoff      time.Duration
	// Dispatch configures the notifications dispatcher (off without a URL).
	Dispatch dispatch.Config
	// ShutdownGrace bounds the wait for in-flight requests on stop. Default 20s.
	ShutdownGrace time.Duration
	// Profiling serves /debug/pprof/ on the HTTP listener.
	Profiling bool
}

func (c pipelineConfig) validate() error {
	if c.DatabaseURL == "" {
		return errors.New("SLUICE_DATABASE_URL is required")
	}
	if (c.CDC || c.Consume) && len(c.Kafka.Brokers) == 0 {
		return errors.New("SLUICE_KAFKA_BROKERS is required for cdc and consume")
	}
	if c.Ingest && c.SecretKey == "" {
		return errors.New("SLUICE_SECRET_KEY is required to serve ingest (base64 of 32 random bytes; `make run` generates one)")
	}
	if !c.Ingest && !c.CDC && !c.Consume {
		return errors.New("nothing to run")
	}
	return nil
}

// creditsGroup is the consumer group that grants credits.
func creditsGroup(t envelope.Topics) string { return t.Resource("credits") }

// process is a running Sluice process.
type process struct {
	addr net.Addr
	done chan struct{}
	err  error
}

// Addr is where the HTTP listener is.
func (p *process) Addr() net.Addr { return p.addr }

// Wait blocks until the process stopped (its context ended and everything
// drained) and returns the first error.
func (p *process) Wait() error {
	<-p.done
	return p.err
}

// startPipeline validates cfg, connects, and starts the configured stages. They run
// until ctx ends.
func startPipeline(ctx context.Context, cfg pipelineConfig, log *slog.Logger) (*process, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if cfg.ShutdownGrace <= 0 {
		cfg.ShutdownGrace = 20 * time.Second
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))

	// The consumers' batch transactions (ConsumerTransactions in all), the
	// committers, the relay's helpers and source lookups each hold a
	// connection at times.
	pool, err := pg.Connect(ctx, cfg.DatabaseURL, max(40, int32(cfg.ConsumerTransactions)+24))
	if err != nil {
		return nil, err
	}
	cleanup := []func(){pool.Close}
	fail := func(err error) (*process, error) {
		for _, f := range cleanup {
			f()
		}
		return nil, err
	}
	if cfg.Migrate {
		if err := pg.Migrate(ctx, pool, log); err != nil {
			return fail(err)
		}
	}
	checks := []ops.Check{{Name: "postgres", Fn: pool.Ping}}

	var kafkaOpts []kgo.Opt
	if cfg.CDC || cfg.Consume {
		cfg.Kafka.ClientID = "sluice"
		if kafkaOpts, err = cfg.Kafka.Options(); err != nil {
			return fail(err)
		}
		admin, err := kafka.NewClient(cfg.Kafka)
		if err != nil {
			return fail(err)
		}
		cleanup = append(cleanup, admin.Close)
		adm := kadm.NewClient(admin)
		checks = append(checks, ops.Check{Name: "kafka", Fn: func(ctx context.Context) error {
			_, err := adm.ApiVersions(ctx)
			return err
		}})
		catalogue, err := schemas.Load()
		if err != nil {
			return fail(err)
		}
		if err := kafka.EnsureTopics(ctx, adm, cfg.TopicSpec, groups.Topics(cfg.Topics, catalogue.Topics()...)...); err != nil {
			return fail(err)
		}
	}

	var ring *keyring.Ring
	if cfg.Ingest {
		if ring, err = keyring.Parse(cfg.SecretKey); err != nil {
			return fail(err)
		}
		// A ring that cannot open the stored secrets would answer 503 to
		// every delivery while looking healthy; GitHub never redelivers.
		keys := tenancy.Store{Pool: pool, Ring: ring}
		if err := keys.CheckKeyRing(ctx); err != nil {
			return fail(err)
		}
		checks = append(checks, ops.Check{Name: "keyring", Fn: keys.CheckKeyRing})
	}

	httpSrv := ops.New(cfg.HTTPAddr, log, reg, checks)
	if cfg.Profiling {
		httpSrv.EnableProfiling()
	}
	if cfg.TLSCert != "" {
		httpSrv.UseTLS(cfg.TLSCert, cfg.TLSKey)
	}
	var ingestSvc *ingest.Service
	if cfg.Ingest {
		catalogue, err := schemas.Load()
		if err != nil {
			return fail(err)
		}
		ic := cfg.IngestConfig
		ic.Topics = cfg.Topics
		ingestSvc = ingest.New(ic, log.With(slog.String("component", "ingest")), pool, ring, catalogue, reg)
		ingestSvc.Register(httpSrv.Engine)
	}
	ln, err := httpSrv.Listen()
	if err != nil {
		return fail(err)
	}

	var runners []func(context.Context) error
	if cfg.CDC {
		cc := cfg.CDCConfig
		cc.DatabaseURL = cfg.DatabaseURL
		relay := cdc.New(cc, log.With(slog.String("component", "cdc")), pool, kafkaOpts, reg)
		runners = append(runners, relay.Run)
	}
	if cfg.Consume {
		slots := consumers.NewSlots(cfg.ConsumerTransactions)
		for _, spec := range groups.List(cfg.Topics, pool, groups.Options{Dispatch: cfg.Dispatch}) {
			group, err := consumers.NewGroup(consumers.Config{
				Group:            spec.ID,
				Topics:           spec.Topics,
				DeadLetterTopic:  spec.DeadLetterTopic,
				MaxAttempts:      cfg.ConsumerMaxAttempts,
				MaxBufferedBytes: cfg.ConsumerBuffer,
				Slots:            slots,
				Backoff:          cfg.ConsumerBackoff,
			}, log.With(slog.String("component", "consumer")), pool, spec.Handler, kafkaOpts, reg)
			if err != nil {
				ln.Close()
				return fail(err)
			}
			runners = append(runners, group.Run)
		}
	}

	// One stage failing for good stops the others: a half-running process
	// would look healthy while losing work.
	ctx, cancel := context.WithCancel(ctx)
	p := &process{addr: ln.Addr(), done: make(chan struct{})}
	var (
		wg    sync.WaitGroup
		errMu sync.Mutex
	)
	record := func(err error) {
		if err == nil || errors.Is(err, context.Canceled) {
			return
		}
		errMu.Lock()
		if p.err == nil {
			p.err = err
		}
		errMu.Unlock()
		cancel()
	}
	if ingestSvc != nil {
		ingestSvc.Start()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		// Stop accepting and answer in-flight requests first; only then
		// drain the commit queue those requests are waiting on.
		record(httpSrv.Serve(ctx, ln, cfg.ShutdownGrace))
		if ingestSvc != nil {
			ingestSvc.Stop()
		}
	}()
	for _, run := range runners {
		wg.Add(1)
		go func() {
			defer wg.Done()
			record(run(ctx))
		}()
	}
	go func() {
		wg.Wait()
		cancel()
		for _, f := range cleanup {
			f()
		}
		close(p.done)
	}()
	return p, nil
}

// String describes which stages a configuration runs.
func (c pipelineConfig) String() string {
	return fmt.Sprintf("ingest=%v cdc=%v consume=%v", c.Ingest, c.CDC, c.Consume)
}
