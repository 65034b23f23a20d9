package pipeline

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/plugin/kprom"

	"github.com/sluicehq/sluice/command/internal/operator/admin"
	"github.com/sluicehq/sluice/command/internal/operator/console"
	"github.com/sluicehq/sluice/command/internal/operator/operate"
	"github.com/sluicehq/sluice/command/internal/operator/testevent"
	"github.com/sluicehq/sluice/internal/cdc"
	"github.com/sluicehq/sluice/internal/consumers"
	"github.com/sluicehq/sluice/internal/consumers/delivery"
	"github.com/sluicehq/sluice/internal/consumers/destinations"
	"github.com/sluicehq/sluice/internal/consumers/groups"
	"github.com/sluicehq/sluice/internal/consumers/offsets"
	"github.com/sluicehq/sluice/internal/ingest"
	"github.com/sluicehq/sluice/internal/ingest/reconcile"
	"github.com/sluicehq/sluice/internal/kafka"
	"github.com/sluicehq/sluice/internal/keyring"
	"github.com/sluicehq/sluice/internal/listen"
	"github.com/sluicehq/sluice/internal/pg"
	"github.com/sluicehq/sluice/internal/provider"
	"github.com/sluicehq/sluice/internal/standardwebhooks"
	"github.com/sluicehq/sluice/internal/store/catalog"
	"github.com/sluicehq/sluice/internal/store/endpoints"
	"github.com/sluicehq/sluice/internal/store/lifecycle"
	"github.com/sluicehq/sluice/internal/store/tenancy"
	"github.com/sluicehq/sluice/schemas"
)

// assembly is a process being built: what the stages share, the readiness
// checks they register, and the stages themselves. Each build step adds
// one stage's parts.
type assembly struct {
	cfg Config
	log *slog.Logger

	reg  *prometheus.Registry
	pool *pgxpool.Pool
	// ownerPool migrates and runs the lifecycle manager, adminPool serves
	// the admin listener: the process's pool unless their own roles'
	// connections are configured (roles.go).
	ownerPool, adminPool *pgxpool.Pool
	catalogue            *schemas.Catalogue
	effects              []groups.Effect // the deployment's effect groups, as the runtime runs them
	types                catalog.Config  // tenants' event types: vocabulary and limits
	checks               []listen.Check
	closers              []func()

	kafkaOpts []kgo.Opt
	adm       *kadm.Client // nil when no stage needs Kafka
	topics    *topicGate   // nil when no stage needs Kafka
	access    *kafkaAccess // nil when no stage needs Kafka

	ingest  *ingest.Service
	ln      net.Listener
	adminLn net.Listener // nil without an admin listener
	// portalLn is the portal's listener (portal.go); nil without one.
	portalLn net.Listener
	stages   []stage

	// reconciler runs reconciliation by admin request; nil when the
	// process does not ingest.
	reconciler *reconcile.Runner
	// life keeps the partitions ahead; nil when the process does not
	// ingest.
	life *lifecycle.Manager
	// doctor builds the checks only (`sluice doctor`): nothing starts.
	doctor bool
}

func (a *assembly) build(ctx context.Context) error {
	a.reg = prometheus.NewRegistry()
	a.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		collectors.NewBuildInfoCollector())
	if err := a.vocabulary(); err != nil {
		return err
	}
	for _, step := range []func(context.Context) error{a.postgres, a.kafkaTopics, a.checkDeployment,
		a.ingestStage, a.relayStage, a.consumerStages, a.httpStage, a.adminStage} {
		if err := step(ctx); err != nil {
			return err
		}
	}
	return nil
}

// vocabulary loads the built-in event types and the configuration of
// tenants' own, which decide the topics.
func (a *assembly) vocabulary() error {
	catalogue, err := schemas.Load(a.cfg.EventTypes...)
	if err != nil {
		return err
	}
	a.catalogue = catalogue
	if a.effects, err = a.cfg.Effects.Effects(a.cfg.Topics.Prefix, catalogue); err != nil {
		return err
	}
	a.types = a.cfg.Catalog
	a.types.Topics, a.types.Builtin, a.types.Providers = a.cfg.Topics, catalogue, a.cfg.IngestConfig.Providers
	a.types, err = a.types.WithDefaults()
	return err
}

// checkDeployment adds the deployment's checks to readiness and refuses to
// start while one that waiting cannot fix fails; Watch logs those at ERROR
// should they fail later (a privilege revoked, a key dropped).
func (a *assembly) checkDeployment(ctx context.Context) error {
	checks, err := a.deploymentChecks()
	if err != nil {
		return err
	}
	if err := a.refuse(ctx, checks); err != nil {
		return err
	}
	a.checks = append(a.checks, checks...)
	log := a.log.With(slog.String("component", "doctor"))
	a.stages = append(a.stages, stage{name: "doctor", run: func(ctx context.Context) error {
		return listen.Watch(ctx, checks, watchEvery, time.Minute, log)
	}})
	return nil
}

// watchEvery is how often a running process checks again what waiting
// cannot fix.
const watchEvery = 15 * time.Second

// close releases what the stages shared, once they all stopped.
func (a *assembly) close() {
	for _, f := range a.closers {
		f()
	}
}

func (a *assembly) postgres(ctx context.Context) error {
	// The consumers' batch transactions (ConsumerTransactions in all), the
	// committers, the relay's helpers and source lookups each hold a
	// connection at times.
	pool, err := pg.Connect(ctx, a.cfg.DatabaseURL, max(40, int32(a.cfg.ConsumerTransactions)+24))
	if err != nil {
		return err
	}
	a.pool = pool
	a.closers = append(a.closers, pool.Close)
	if a.ownerPool, err = a.roleConnection(ctx, a.cfg.OwnerDatabaseURL, 4, "the owner's connection (SLUICE_OWNER_DATABASE_URL)"); err != nil {
		return err
	}
	if a.adminPool, err = a.roleConnection(ctx, a.cfg.AdminDatabaseURL, 10, "the admin listener's connection (SLUICE_ADMIN_DATABASE_URL)"); err != nil {
		return err
	}
	if err := a.migrateOrCheck(ctx); err != nil {
		return err
	}
	// The resource types decide topics: every process takes the
	// deployment's list, and one given a list of its own that differs
	// refuses to start.
	rts, err := catalog.SettleResourceTypes(ctx, pool, a.cfg.Catalog.ResourceTypes)
	if err != nil {
		return err
	}
	a.types.ResourceTypes = rts
	a.reg.MustRegister(pg.NewPoolCollector(pool))
	return nil
}

// kafkaTopics prepares the clients' options and the background creation of the
// topics; nothing here needs the cluster to be reachable.
func (a *assembly) kafkaTopics(context.Context) error {
	if !a.cfg.needsKafka() {
		return nil
	}
	kc := a.cfg.Kafka
	kc.ClientID = "sluice"
	opts, err := kc.Options()
	if err != nil {
		return err
	}
	a.kafkaOpts = opts
	admin, err := kafka.NewClient(kc, a.kafkaMetrics("admin"))
	if err != nil {
		return err
	}
	a.closers = append(a.closers, admin.Close)
	adm := kadm.NewClient(admin)
	a.adm = adm
	if a.access, err = newKafkaAccess(kc, admin, a.cfg.Topics.Prefix); err != nil {
		return err
	}
	a.topics = newTopicGate(adm, a.cfg.TopicSpec, a.topicNames(), a.cfg.KafkaBackoff,
		a.log.With(slog.String("component", "kafka")))
	a.topics.access = a.access
	a.stages = append(a.stages, stage{name: "topics", run: a.topics.ensure})
	return nil
}

func (a *assembly) ingestStage(ctx context.Context) error {
	if !a.cfg.Ingest {
		return nil
	}
	ring, err := keyring.Parse(a.cfg.SecretKey)
	if err != nil {
		return err
	}
	keys := tenancy.Store{Pool: a.pool, Ring: ring, Providers: a.cfg.IngestConfig.Providers}
	ic := a.cfg.IngestConfig
	ic.Topics = a.cfg.Topics
	ic.Tracing = a.cfg.Tracing
	ic.EndpointsRefresh = cmp.Or(ic.EndpointsRefresh, a.cfg.EndpointsRefresh)
	// Group commits on connections of their own (pg.ConnectCommitter says
	// why).
	commits, err := pg.ConnectCommitter(ctx, a.cfg.DatabaseURL, int32(ic.Commit.WithDefaults().Committers))
	if err != nil {
		return err
	}
	a.closers = append(a.closers, commits.Close)
	ic.Commit.Pool = commits
	if ic.TenantTypes, err = catalog.New(a.pool, a.types); err != nil {
		return err
	}
	a.ingest = ingest.New(ic, a.log.With(slog.String("component", "ingest")), a.pool, ring, a.catalogue, a.reg)
	a.reconcileRunners(keys, ic.Providers)
	a.stages = append(a.stages, stage{name: "lifecycle", run: a.life.Run})
	return nil
}

// reconcileRunners builds the schedule's runner, when it runs here, and
// the admin API's, sharing one set of metrics (they register once). The
// admin API's runs answer a request, so each is bounded by
// admin.ReconcileRunTimeout; both read the same flags otherwise.
func (a *assembly) reconcileRunners(keys tenancy.Store, registry *provider.Registry) {
	metrics := reconcile.NewMetrics(a.reg)
	log := a.log.With(slog.String("component", "reconcile"))
	rc := a.cfg.Reconcile
	rc.EffectGroups = a.cfg.Effects.RunningNames()
	if a.cfg.ReconcileSchedule {
		runner := reconcile.New(rc, log, keys, registry, a.ingest, metrics)
		a.stages = append(a.stages, stage{name: "reconcile", run: runner.Loop})
	}
	rc.RunTimeout = min(cmp.Or(rc.RunTimeout, admin.ReconcileRunTimeout), admin.ReconcileRunTimeout)
	a.reconciler = reconcile.New(rc, log, keys, registry, a.ingest, metrics)
}

// relayStage starts at once, without waiting for Kafka: it needs Postgres
// to hold its slot (what ingest commits meanwhile then waits in the slot),
// and it already waits out an absent Kafka with backpressure, restarting
// its stream until records are acknowledged.
func (a *assembly) relayStage(context.Context) error {
	if !a.cfg.CDC {
		return nil
	}
	cc := a.cfg.CDCConfig
	cc.DatabaseURL = a.cfg.DatabaseURL
	cc.Tracing = a.cfg.Tracing
	// A topic the relay may create is made like the ones created at start.
	cc.Topics, cc.TopicSpec = a.cfg.Topics, a.cfg.TopicSpec
	opts := append(slices.Clip(a.kafkaOpts), a.kafkaMetrics("relay"))
	relay := cdc.New(cc, a.log.With(slog.String("component", "cdc")), a.pool, opts, a.reg)
	a.stages = append(a.stages, stage{name: "cdc", run: relay.Run})
	slot := cc.WithDefaults().Slot
	a.reg.MustRegister(cdc.NewParkedCollector(a.pool, slot, scrapeTimeout, a.log), cdc.NewSlotCollector(a.pool, slot, scrapeTimeout, a.log))
	return nil
}

// kafkaMetrics are franz-go's metrics (kprom) of the Kafka client named
// client ("admin", "relay" or a consumer group), on the process's registry:
// sluice_kafka_* with a client label, by broker and, for bytes and
// records, by topic (Sluice's own, a bounded set). One value per client,
// since kprom registers its series when the client starts and removes them
// when it closes.
func (a *assembly) kafkaMetrics(client string) kgo.Opt {
	return kgo.WithHooks(kprom.NewMetrics("sluice_kafka",
		kprom.Registerer(a.reg),
		kprom.WithStaticLabel(prometheus.Labels{"client": client}),
		kprom.FetchAndProduceDetail(kprom.ByNode, kprom.ByTopic, kprom.Records, kprom.UncompressedBytes, kprom.ConsistentNaming)))
}

// scrapeTimeout bounds what one /metrics scrape waits for Postgres or Kafka.
const scrapeTimeout = 2 * time.Second

// consumerStages wait for the topics: a group that subscribed before they
// exist would only poll metadata.
func (a *assembly) consumerStages(ctx context.Context) error {
	if !a.cfg.Consume {
		return nil
	}
	slots := consumers.NewSlots(a.cfg.ConsumerTransactions)
	if err := a.deploymentEndpoint(ctx); err != nil {
		return err
	}
	eventTopics := a.eventTopics()
	ends := endpoints.Store{Pool: a.pool}
	subs := destinations.NewSubscriptions(ends.Subscriptions, cmp.Or(a.cfg.EndpointsRefresh, destinations.Refresh))
	fanOut := destinations.New(subs, destinations.Telemetry{Log: a.log.With(slog.String("component", "fan-out")), Registerer: a.reg})
	if a.cfg.Dispatch.URL != "" && a.cfg.Dispatch.Operational {
		fanOut.Deployment = endpoints.DeploymentEndpointID(a.cfg.Topics.Prefix)
	}
	idle := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "sluice_consumer_group_idle",
		Help: "1 while a group is held stopped because it has nothing to do (the fan-out while no endpoint is enabled)."}, []string{"group"})
	a.reg.MustRegister(idle)
	specs := groups.List(a.cfg.Topics, groups.Options{Effects: a.effects, Dispatch: a.cfg.Dispatch, Destinations: fanOut, EventTopics: eventTopics})
	ids := make([]string, 0, len(specs))
	for _, spec := range specs {
		ids = append(ids, spec.ID)
	}
	a.reg.MustRegister(offsets.NewLagCollector(a.adm, ids, scrapeTimeout, a.log), consumers.NewBacklogCollector(a.pool, scrapeTimeout, a.log),
		consumers.NewWaitingCollector(a.pool, scrapeTimeout, a.log))
	for _, spec := range specs {
		cfg := a.cfg.Consumer
		cfg.Group, cfg.Topics, cfg.DeadLetterTopic = spec.ID, spec.Topics, spec.DeadLetterTopic
		cfg.MaxAttempts = cmp.Or(spec.MaxAttempts, cfg.MaxAttempts)
		cfg.Slots, cfg.Tracing = slots, a.cfg.Tracing
		group, err := consumers.NewGroup(cfg, a.log.With(slog.String("component", "consumer")), a.pool, spec.Handler,
			append(slices.Clip(a.kafkaOpts), a.kafkaMetrics(spec.ID)), a.reg)
		if err != nil {
			return err
		}
		run := group.Run
		if spec.Handler == fanOut {
			run = a.fanOutGate(spec, ends, subs, idle.WithLabelValues(spec.ID), group.Run)
		}
		a.stages = append(a.stages, stage{name: spec.ID, gate: a.topics, run: run})
		// A group retrying a deployment fault (a revoked grant) is not
		// ready, in the fault's words, until it applies again.
		a.checks = append(a.checks, listen.Check{Name: "consumer " + spec.ID, Fn: group.CheckDeployment})
	}
	return a.deliverStage(ctx)
}

// fanOutGate runs the fan-out's group only while an endpoint is enabled
// (destinations.Gate), looking as often as the fan-out re-reads endpoints,
// but at most once a second; each start reads the endpoints afresh.
func (a *assembly) fanOutGate(spec groups.Group, ends endpoints.Store, subs *destinations.Subscriptions, idle prometheus.Gauge, run func(context.Context) error) func(context.Context) error {
	subscribed := ends.AnyEnabled
	if a.cfg.Dispatch.URL != "" && a.cfg.Dispatch.Operational {
		// The deployment's endpoint takes every tenant's operational
		// events: the fan-out always has someone to write for.
		subscribed = func(context.Context) (bool, error) { return true, nil }
	}
	gate := destinations.Gate{
		Subscribed: subscribed,
		Mark: func(ctx context.Context) (func(context.Context) error, error) {
			to, err := offsets.Ends(ctx, a.adm, spec.Topics...)
			if err != nil {
				return nil, err
			}
			return func(ctx context.Context) error {
				_, err := offsets.ForwardTo(ctx, a.adm, spec.ID, to)
				if errors.Is(err, offsets.ErrGroupActive) {
					return nil // another process's member reads them
				}
				return err
			}, nil
		},
		Every: max(cmp.Or(a.cfg.EndpointsRefresh, destinations.Refresh), time.Second),
		Idle:  cmp.Or(a.cfg.FanOutIdle, destinations.Idle),
		Held: func(held bool) {
			if held {
				idle.Set(1)
			} else {
				idle.Set(0)
			}
		},
		Log: a.log.With(slog.String("component", "consumer"), slog.String("group", spec.ID)),
	}
	return func(ctx context.Context) error {
		return gate.Run(ctx, func(ctx context.Context) error {
			subs.Forget()
			return run(ctx)
		})
	}
}

// endpointTester sends the admin API's test events: a deliverer of its
// own, never run, so any process with the key ring answers them; none
// without (the route answers 503).
func (a *assembly) endpointTester(ends endpoints.Store) admin.EndpointTester {
	if ends.Ring == nil || a.cfg.Delivery.Client == nil {
		return nil
	}
	return delivery.New(a.cfg.Delivery, a.log.With(slog.String("component", "delivery")), a.adminPool, ends)
}

// deliverStage runs the deliverer beside the consumers: it reads only
// Postgres, so it needs no topic.
func (a *assembly) deliverStage(ctx context.Context) error {
	if !a.cfg.Deliver {
		return nil
	}
	ring, err := keyring.Parse(a.cfg.SecretKey)
	if err != nil {
		return err
	}
	// A pool of its own (pg.ConnectDeliverer says how it differs).
	pool, err := pg.ConnectDeliverer(ctx, a.cfg.DatabaseURL, 16)
	if err != nil {
		return err
	}
	a.closers = append(a.closers, pool.Close)
	dc := a.cfg.Delivery
	dc.Registerer = a.reg
	dc.Tracing = a.cfg.Tracing
	dc.Name = a.cfg.Topics.Prefix
	if dep := a.cfg.Dispatch; dep.URL != "" {
		if err := a.deploymentEndpoint(ctx); err != nil {
			return err
		}
		key, _ := standardwebhooks.Key(dep.Secret) // Validate checked it
		dc.Deployment = &delivery.Deployment{EndpointID: endpoints.DeploymentEndpointID(a.cfg.Topics.Prefix), URL: dep.URL, Key: key, Client: &http.Client{Timeout: cmp.Or(dep.Timeout, 10*time.Second)}}
	}
	dc.Refresh = cmp.Or(dc.Refresh, a.cfg.EndpointsRefresh)
	d := delivery.New(dc, a.log.With(slog.String("component", "delivery")), pool, endpoints.Store{Pool: pool, Ring: ring})
	a.stages = append(a.stages, stage{name: "delivery", run: d.Run})
	return nil
}

// deploymentEndpoint writes the row of the deployment's own endpoint
// (--dispatch-url), which the dispatcher's deliveries name.
func (a *assembly) deploymentEndpoint(ctx context.Context) error {
	if a.cfg.Dispatch.URL == "" {
		return nil
	}
	return endpoints.Store{Pool: a.pool}.EnsureDeploymentEndpoint(ctx, a.cfg.Topics.Prefix, a.cfg.Dispatch.URL)
}

// httpStage binds the public listener after every other step, so a
// failed start leaves no port bound.
func (a *assembly) httpStage(context.Context) error {
	srv := listen.NewPublic(a.cfg.HTTPAddr, a.log, a.checks, a.cfg.Ingest)
	if a.cfg.TLSCert != "" {
		srv.UseTLS(a.cfg.TLSCert, a.cfg.TLSKey)
	}
	svc := a.ingest
	if svc != nil {
		svc.Register(srv.Engine)
		if mw := svc.Middleware(); mw != nil {
			srv.Wrap(mw)
		}
	}
	ln, err := srv.Listen()
	if err != nil {
		return err
	}
	a.ln = ln
	a.closers = append(a.closers, func() { _ = ln.Close() })
	a.stages = append(a.stages, stage{name: "http", run: func(ctx context.Context) error {
		if svc == nil {
			return srv.Serve(ctx, ln, a.cfg.ShutdownGrace)
		}
		// Stop accepting and answer in-flight requests first; only then
		// drain the commit queue those requests are waiting on: ingest's
		// context outlives the listener's.
		commits, stopCommits := context.WithCancel(context.WithoutCancel(ctx))
		committed := make(chan error, 1)
		go func() { committed <- svc.Run(commits) }()
		err := srv.Serve(ctx, ln, a.cfg.ShutdownGrace)
		stopCommits()
		return errors.Join(err, <-committed)
	}})
	return nil
}

// adminAPI registers the admin API (/admin/v1) on e with every group this
// process serves, and returns it and the operator behind its operate routes.
func (a *assembly) adminAPI(e *gin.Engine, store tenancy.Store) (*admin.API, *operate.Operator, error) {
	types, err := catalog.New(a.adminPool, a.types)
	if err != nil {
		return nil, nil, err
	}
	// One operator over this process's pool and, when it runs a stage that
	// reads Kafka, its admin client: an ingest-only process answers the
	// Kafka routes 503.
	op := operate.New(a.adminPool, a.adm, operate.Config{Topics: a.cfg.Topics, Groups: groups.Options{Effects: a.effects, Dispatch: a.cfg.Dispatch},
		Trails: a.cfg.Effects.Trails(), Slot: a.cfg.CDCConfig.WithDefaults().Slot, Metrics: a.reg})
	ends := &endpoints.Store{Pool: a.adminPool, Ring: store.Ring, Limits: a.cfg.EndpointLimits, CheckURL: a.cfg.EndpointURLCheck, Topics: &a.cfg.Topics}
	apiGroups := append([]func(*admin.API){admin.OperateRoutes(op, a.log.With(slog.String("component", "admin"))), admin.CatalogRoutes(types),
		admin.DestinationRoutes(ends, a.endpointTester(*ends), testevent.Builder{Pool: a.adminPool, Builtin: a.catalogue, Types: types}), admin.DeliveryRoutes(ends, a.cfg.Lifecycle.WithDefaults().PayloadHorizon)},
		a.cfg.AdminGroups...)
	api := admin.New(e, admin.Config{Pool: a.adminPool, Store: store, Groups: apiGroups, Reconciler: a.reconciler, Metrics: a.reg,
		FailedAuthRate: a.cfg.AdminFailedAuthRate, FailedAuthBurst: a.cfg.AdminFailedAuthBurst, Portal: a.cfg.Portal.adminPortal()}, a.log)
	return api, op, nil
}

// adminStage binds the operators' listener: every stage's readiness,
// metrics, the admin API (/admin/v1) and, when enabled, profiles.
func (a *assembly) adminStage(context.Context) error {
	if a.cfg.AdminAddr == "" {
		return nil
	}
	srv := listen.NewAdmin(a.cfg.AdminAddr, a.log, a.reg, a.checks)
	store := tenancy.Store{Pool: a.adminPool, Providers: a.cfg.IngestConfig.Providers}
	if a.cfg.SecretKey != "" {
		// Without a key ring (a relay or consumer process) the API still
		// serves; creating a source or rotating a secret says what is missing.
		ring, err := keyring.Parse(a.cfg.SecretKey)
		if err != nil {
			return err
		}
		store.Ring = ring
	}
	_, op, err := a.adminAPI(srv.Engine, store)
	if err != nil {
		return err
	}
	// The browser console (/console) asks the API above, in process, with
	// each session's own token.
	health := func(ctx context.Context) []console.StageHealth { return stageHealth(ctx, a.checks, a.stagesHere()) }
	if _, err := console.Register(srv.Engine, console.Config{Pool: a.adminPool, API: srv.Engine, Health: health}, a.log); err != nil {
		return err
	}
	if err := a.portalStage(srv.Engine); err != nil {
		return err
	}
	if a.cfg.Profiling {
		srv.EnableProfiling()
	}
	if a.cfg.AdminTLSCert != "" {
		srv.UseTLS(a.cfg.AdminTLSCert, a.cfg.AdminTLSKey)
	}
	ln, err := srv.Listen()
	if err != nil {
		return err
	}
	a.adminLn = ln
	a.stages = append(a.stages, stage{name: "admin", run: func(ctx context.Context) error {
		// The overview's lag charts: samples of this process, kept in
		// memory while the listener serves.
		sampling, stopSampling := context.WithCancel(ctx)
		sampled := make(chan error, 1)
		go func() { sampled <- op.SampleProcess(sampling, operate.SampleEvery) }()
		err := srv.Serve(ctx, ln, a.cfg.ShutdownGrace)
		stopSampling()
		return errors.Join(err, <-sampled)
	}})
	return nil
}
