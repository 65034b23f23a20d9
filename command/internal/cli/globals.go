package cli

import (
	"context"
	"fmt"
	"io/fs"
	"log/slog"
	"net/netip"
	"os"
	"strings"
	"time"

	"github.com/sluicehq/sluice/command/internal/effects"
	"github.com/sluicehq/sluice/command/internal/pipeline"
	"github.com/sluicehq/sluice/effect"
	"github.com/sluicehq/sluice/internal/audit"
	"github.com/sluicehq/sluice/internal/consumers"
	"github.com/sluicehq/sluice/internal/consumers/dispatch"
	"github.com/sluicehq/sluice/internal/consumers/groups"
	"github.com/sluicehq/sluice/internal/envelope"
	"github.com/sluicehq/sluice/internal/ingest"
	"github.com/sluicehq/sluice/internal/kafka"
	"github.com/sluicehq/sluice/internal/keyring"
	"github.com/sluicehq/sluice/internal/provider/kinds"
	"github.com/sluicehq/sluice/internal/store/catalog"
	"github.com/sluicehq/sluice/internal/store/endpoints"
	"github.com/sluicehq/sluice/internal/store/lifecycle"
	"github.com/sluicehq/sluice/internal/telemetry"
	"github.com/sluicehq/sluice/schemas"
)

// Globals is the configuration shared by every command.
type Globals struct {
	DatabaseURL   string   `name:"database-url" env:"SLUICE_DATABASE_URL" envfile:"" help:"Postgres URL (wal_level=logical for cdc)."`
	OwnerURL      string   `name:"owner-database-url" env:"SLUICE_OWNER_DATABASE_URL" envfile:"" help:"Postgres URL of the schema's owner, for migrations and the lifecycle manager (partitions need ownership); empty: --database-url."`
	KafkaBrokers  []string `name:"kafka-brokers" env:"SLUICE_KAFKA_BROKERS" sep:"," help:"Kafka seed brokers, comma-separated."`
	KafkaTLS      bool     `name:"kafka-tls" env:"SLUICE_KAFKA_TLS" help:"Connect to Kafka over TLS."`
	KafkaCAFile   string   `name:"kafka-ca-file" env:"SLUICE_KAFKA_CA_FILE" help:"PEM CA bundle for Kafka TLS (default: system roots)."`
	KafkaCertFile string   `name:"kafka-cert-file" env:"SLUICE_KAFKA_CERT_FILE" help:"Client certificate for Kafka mutual TLS (PEM), instead of or beside SASL; implies --kafka-tls. The broker's principal is its subject (User:CN=...)."`
	KafkaKeyFile  string   `name:"kafka-key-file" env:"SLUICE_KAFKA_KEY_FILE" help:"Key of --kafka-cert-file (PEM)."`
	KafkaSASL     string   `name:"kafka-sasl-mechanism" env:"SLUICE_KAFKA_SASL_MECHANISM" enum:",plain,scram-sha-256,scram-sha-512" default:"" help:"SASL mechanism: plain, scram-sha-256 or scram-sha-512."`
	KafkaUser     string   `name:"kafka-sasl-user" env:"SLUICE_KAFKA_SASL_USER" help:"SASL user."`
	KafkaPassword string   `name:"kafka-sasl-password" env:"SLUICE_KAFKA_SASL_PASSWORD" envfile:"" help:"SASL password."`
	SecretKey     string   `name:"secret-key" env:"SLUICE_SECRET_KEY" envfile:"" help:"Key ring encrypting source secrets: base64 of 32 bytes, or id:base64,... (first encrypts)."`
	TopicPrefix   string   `name:"topic-prefix" env:"SLUICE_TOPIC_PREFIX" default:"sluice" help:"Prefix of every topic and consumer group."`
	ResourceTypes []string `name:"tenant-resource-types" env:"SLUICE_TENANT_RESOURCE_TYPES" sep:"," help:"Resource types tenants' own event types may publish as, one shared topic each (<prefix>.tenant.<type>). Empty: the deployment's list, stored in Postgres by its first process (account,customer,document,event,message,order,payment,product,shipment,subscription,ticket,user unless that process named others); a process naming a list other than the stored one refuses to start. sluice eventtype resource-types add adds one."`
	MaxEventTypes int      `name:"max-event-types" env:"SLUICE_MAX_EVENT_TYPES" default:"200" help:"Event types one tenant may declare."`
	LogLevel      string   `name:"log-level" env:"SLUICE_LOG_LEVEL" enum:"debug,info,warn,error" default:"info" help:"Log level."`
	LogFormat     string   `name:"log-format" env:"SLUICE_LOG_FORMAT" enum:"text,json" default:"text" help:"Log format."`
	EffectGroups  []string `name:"effect-groups" env:"SLUICE_EFFECT_GROUPS" sep:"," help:"Effect groups this deployment runs, comma-separated, of the binary's (sluice lag names them); empty: every one. Give every process of a deployment the same list."`
	HelpAll       HelpAll  `name:"help-all" help:"Show help with the deployment-wide flags too."`

	app *App // what the binary adds
}

// effects are the binary's effect groups and the deployment's choice.
func (g *Globals) effects() (effects.Set, error) {
	var own []effect.Group
	if g.app != nil {
		own = g.app.Groups
	}
	return effects.NewSet(append(effects.Builtin(), own...), g.EffectGroups)
}

// appMigrations is the binary's own schema; nil for none.
func (g *Globals) appMigrations() fs.FS {
	if g.app == nil {
		return nil
	}
	return g.app.Migrations
}

// eventTypes are the binary's own event types' schemas.
func (g *Globals) eventTypes() []fs.FS {
	if g.app == nil {
		return nil
	}
	return g.app.EventTypes
}

// groups is o with the deployment's effect groups, whose topics the event
// catalogue (Sluice's and the binary's types) says.
func (g *Globals) groups(o groups.Options) (groups.Options, error) {
	set, err := g.effects()
	if err != nil {
		return o, err
	}
	cat, err := schemas.Load(g.eventTypes()...)
	if err != nil {
		return o, err
	}
	o.Effects, err = set.Effects(g.TopicPrefix, cat)
	return o, err
}

func (g *Globals) logger() *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(g.LogLevel))
	opts := &slog.HandlerOptions{Level: level}
	var h slog.Handler = slog.NewTextHandler(os.Stderr, opts)
	if g.LogFormat == "json" {
		h = slog.NewJSONHandler(os.Stderr, opts)
	}
	// Lines logged within a traced request or record name its trace.
	return slog.New(telemetry.NewLogHandler(h))
}

func (g *Globals) kafka() kafka.Config {
	var brokers []string
	for _, b := range g.KafkaBrokers {
		if b = strings.TrimSpace(b); b != "" {
			brokers = append(brokers, b)
		}
	}
	return kafka.Config{Brokers: brokers, TLS: g.KafkaTLS, TLSCAFile: g.KafkaCAFile, CertFile: g.KafkaCertFile, KeyFile: g.KafkaKeyFile,
		SASLMechanism: g.KafkaSASL, SASLUser: g.KafkaUser, SASLPassword: g.KafkaPassword}
}

func (g *Globals) topics() envelope.Topics { return envelope.Topics{Prefix: g.TopicPrefix} }

// catalog is the configuration of tenants' own event types.
func (g *Globals) catalog() catalog.Config {
	var rts []string
	for _, rt := range g.ResourceTypes {
		if rt = strings.TrimSpace(rt); rt != "" {
			rts = append(rts, rt)
		}
	}
	return catalog.Config{ResourceTypes: rts, MaxTypesPerTenant: g.MaxEventTypes, Topics: g.topics(), Providers: kinds.Builtin()}
}

// endpointsStore opens tenants' endpoints with the key ring (their
// secrets and headers are sealed) under the deployment's policy p (what a
// create or a change is held to), audited as the CLI.
func (g *Globals) endpointsStore(ctx context.Context, p EndpointPolicy) (endpoints.Store, func(), error) {
	pool, err := g.pool(ctx)
	if err != nil {
		return endpoints.Store{}, nil, err
	}
	ring, err := keyring.Parse(g.SecretKey)
	if err != nil {
		pool.Close()
		return endpoints.Store{}, nil, err
	}
	limits, check, err := p.endpoints()
	if err != nil {
		pool.Close()
		return endpoints.Store{}, nil, err
	}
	topics := g.topics()
	return endpoints.Store{Pool: pool, Ring: ring, Actor: &audit.Actor{}, Limits: limits, CheckURL: check, Topics: &topics}, pool.Close, nil
}

// Horizons are how long stored events are kept (internal/store/lifecycle).
type Horizons struct {
	PayloadHorizon time.Duration `name:"payload-horizon" env:"SLUICE_PAYLOAD_HORIZON" default:"168h" help:"How long event bodies are kept (replays, claims, inspection); at least --topic-retention."`
	KeyHorizon     time.Duration `name:"key-horizon" env:"SLUICE_KEY_HORIZON" default:"720h" help:"How long event keys are kept, so a redelivery is a duplicate; at least --payload-horizon."`
	// LinksHorizon is text so that empty (unset, or an empty variable)
	// means the key horizon, and a 0 given is refused.
	LinksHorizon  string        `name:"links-horizon" env:"SLUICE_LINKS_HORIZON" default:"" placeholder:"DURATION" help:"How long object links are kept (which invoice a payment paid, how a Stripe refund reaches its invoice); a refund after its link is gone waits for reconciliation. Empty: --key-horizon."`
	PartitionSpan time.Duration `name:"partition-interval" env:"SLUICE_PARTITION_INTERVAL" default:"24h" help:"Time range of one partition of payloads and delivery records; storage is a horizon plus one of these."`
	Cleanup       bool          `name:"lifecycle-cleanup" env:"SLUICE_LIFECYCLE_CLEANUP" default:"true" negatable:"" help:"Drop and delete what is past its horizon; with --no-lifecycle-cleanup partitions are still created ahead but storage grows without bound (for measuring cleanup, or archiving by other means)."`
	Every         time.Duration `name:"lifecycle-every" env:"SLUICE_LIFECYCLE_EVERY" default:"0s" help:"Pause between lifecycle passes; 0: 5m, or a tenth of --partition-interval when that is shorter."`
}

// lifecycle is the manager's configuration; lifecycle.Config.Validate
// judges the horizons together.
func (h Horizons) lifecycle() (lifecycle.Config, error) {
	cfg := lifecycle.Config{PayloadHorizon: h.PayloadHorizon, KeyHorizon: h.KeyHorizon, Interval: h.PartitionSpan,
		NoCleanup: !h.Cleanup, Every: h.Every}
	if h.LinksHorizon != "" {
		d, err := time.ParseDuration(h.LinksHorizon)
		if err != nil || d <= 0 {
			return cfg, fmt.Errorf("--links-horizon %q: want a positive duration (such as 2160h), or empty for --key-horizon", h.LinksHorizon)
		}
		cfg.LinksHorizon = d
	}
	return cfg, nil
}

// RunFlags configure the long-running commands.
type RunFlags struct {
	Horizons         `embed:""`
	ReconcileFlags   `embed:""`
	DeliveryFlags    `embed:""`
	PortalFlags      `embed:""`
	Reconcile        bool          `name:"reconcile" env:"SLUICE_RECONCILE" default:"true" negatable:"" help:"Run the reconciliation schedule in this process (ingest and serve); --no-reconcile where a dedicated sluice reconcile --every runs it."`
	HTTPAddr         string        `name:"http-addr" env:"SLUICE_HTTP_ADDR" default:":8080" help:"Public listen address: webhooks, /healthz, /readyz."`
	TLSCert          string        `name:"tls-cert" env:"SLUICE_TLS_CERT" help:"Serve HTTPS with this certificate (PEM)."`
	TLSKey           string        `name:"tls-key" env:"SLUICE_TLS_KEY" help:"Key for --tls-cert."`
	AdminAddr        string        `name:"admin-addr" env:"SLUICE_ADMIN_ADDR" default:"127.0.0.1:8082" help:"Admin listen address, private: every stage's /readyz, /metrics, profiles; empty for none."`
	AdminTLSCert     string        `name:"admin-tls-cert" env:"SLUICE_ADMIN_TLS_CERT" help:"Serve the admin listener over HTTPS with this certificate (PEM)."`
	AdminTLSKey      string        `name:"admin-tls-key" env:"SLUICE_ADMIN_TLS_KEY" help:"Key for --admin-tls-cert."`
	Migrate          bool          `name:"migrate" env:"SLUICE_MIGRATE" default:"true" negatable:"" help:"Apply pending migrations at start when the owner's connection owns the schema (a runtime role never migrates; every process refuses a schema older than its binary)."`
	AdminURL         string        `name:"admin-database-url" env:"SLUICE_ADMIN_DATABASE_URL" envfile:"" help:"Postgres URL of the admin listener's own role (admin API, console); empty: --database-url."`
	Partitions       int32         `name:"topic-partitions" env:"SLUICE_TOPIC_PARTITIONS" default:"12" help:"Partitions of topics Sluice creates."`
	Replication      int16         `name:"topic-replication" env:"SLUICE_TOPIC_REPLICATION" default:"1" help:"Replication factor of topics Sluice creates (3 in production)."`
	Retention        time.Duration `name:"topic-retention" env:"SLUICE_TOPIC_RETENTION" default:"168h" help:"Retention of topics Sluice creates: how far back a rewind can go."`
	Slot             string        `name:"slot" env:"SLUICE_SLOT" default:"sluice" help:"Logical replication slot of the relay."`
	RelayLinger      time.Duration `name:"relay-linger" env:"SLUICE_RELAY_LINGER" default:"20ms" help:"How long the relay's producer waits to fill a batch while transactions commit less than this apart (a transaction after a quieter moment goes at once): longer, fewer and larger produce requests for the broker, later records under load."`
	RelayTopicGrace  time.Duration `name:"relay-missing-topic-grace" env:"SLUICE_RELAY_MISSING_TOPIC_GRACE" default:"5s" help:"How long a record whose topic Kafka does not have may wait for it before the relay parks it (sluice cdc parked publish sends it once the topic exists); keep it under the time the relay's in-flight window takes to fill (docs/relay.md)."`
	RelayCreate      bool          `name:"relay-create-topics" env:"SLUICE_RELAY_CREATE_TOPICS" help:"Let the relay create a missing topic whose name is one of Sluice's own under --topic-prefix (<prefix>.<name>, <prefix>.tenant.<name>), with the --topic-* settings, instead of parking its records (off by default)."`
	OutboxRetention  time.Duration `name:"outbox-retention" env:"SLUICE_OUTBOX_RETENTION" default:"24h" help:"How long outbox rows are kept after the relay confirmed them (how far back cdc resync can reach); 0 keeps them."`
	MaxBody          int64         `name:"max-body-bytes" env:"SLUICE_MAX_BODY_BYTES" default:"1048576" help:"Largest webhook body accepted."`
	ConsumerAttempts int           `name:"consumer-max-attempts" env:"SLUICE_CONSUMER_MAX_ATTEMPTS" default:"1" help:"Attempts, one after the other, before a permanently failing record is dead-lettered (replay it once the cause is fixed); more only hold the partition's other tenants longer."`
	DispatchURL      string        `name:"dispatch-url" env:"SLUICE_DISPATCH_URL" help:"The deployment's own endpoint for notification intents (POST, Idempotency-Key header), sent by the deliverer; empty: the dispatcher does not run."`
	DispatchSecret   string        `name:"dispatch-secret" env:"SLUICE_DISPATCH_SECRET" envfile:"" help:"whsec_ secret signing every dispatched request (Standard Webhooks); required with --dispatch-url."`
	DispatchOps      bool          `name:"dispatch-operational" env:"SLUICE_DISPATCH_OPERATIONAL" help:"Deliver every tenant's operational events (sluice.endpoint.failing, .disabled, .recovered) to --dispatch-url too (off by default: the service receives intents only)."`
	ShutdownGrace    time.Duration `name:"shutdown-grace" env:"SLUICE_SHUTDOWN_GRACE" default:"20s" help:"How long SIGTERM waits for in-flight requests."`
	TenantRate       float64       `name:"tenant-rate" env:"SLUICE_TENANT_RATE" default:"1000" help:"Events/s per tenant on this instance, after authentication (429 beyond)."`
	TenantBurst      int           `name:"tenant-burst" env:"SLUICE_TENANT_BURST" default:"2000" help:"Burst of the per-tenant bucket."`
	TrustedProxies   []string      `name:"trusted-proxies" env:"SLUICE_TRUSTED_PROXIES" sep:"," help:"CIDRs whose X-Forwarded-For is believed for source IP allowlists."`
	Committers       int           `name:"ingest-committers" env:"SLUICE_INGEST_COMMITTERS" default:"1" help:"Concurrent group-commit transactions."`
	CommitBatch      int           `name:"ingest-batch" env:"SLUICE_INGEST_BATCH" default:"256" help:"Most deliveries per group-commit transaction."`
	MaxJSONDepth     int           `name:"max-json-depth" env:"SLUICE_MAX_JSON_DEPTH" default:"64" help:"Deepest nesting of arrays and objects in an accepted body (400 beyond)."`
	MaxJSONTokens    int           `name:"max-json-tokens" env:"SLUICE_MAX_JSON_TOKENS" default:"1048576" help:"Most JSON values and keys in an accepted body (400 beyond)."`
	UnverifiedMiB    int64         `name:"unverified-mib" env:"SLUICE_UNVERIFIED_MIB" default:"64" help:"Bodies held before their signature is checked, in MiB, for the process (503 beyond)."`
	UnverifiedSrcMiB int64         `name:"unverified-source-mib" env:"SLUICE_UNVERIFIED_SOURCE_MIB" default:"32" help:"Bodies held before their signature is checked, in MiB, per source (429 beyond)."`
	TenantMetrics    bool          `name:"metrics-per-tenant" env:"SLUICE_METRICS_PER_TENANT" help:"Count ingest requests by tenant too (sluice_ingest_tenant_requests_total): a series per tenant and status code (off by default)."`
	Pprof            bool          `name:"pprof" env:"SLUICE_PPROF" help:"Serve Go profiles under /debug/pprof/ on the admin listener (off by default)."`
	ConsumerTxs      int           `name:"consumer-transactions" env:"SLUICE_CONSUMER_TRANSACTIONS" default:"8" help:"Batch transactions the consumer groups keep open at once, all together."`
	ConsumerGroupTxs int           `name:"consumer-group-transactions" env:"SLUICE_CONSUMER_GROUP_TRANSACTIONS" default:"2" help:"Batch transactions a consumer group may have open at once: one under live load (batches of its partitions ready meanwhile share the next), the others for a backlog or a slow transaction."`
	SharePatience    time.Duration `name:"consumer-share-patience" env:"SLUICE_CONSUMER_SHARE_PATIENCE" default:"50ms" help:"How long batches wait for their consumer group's open transaction before they may open another."`
	ConsumerBuffer   int64         `name:"consumer-buffer-mib" env:"SLUICE_CONSUMER_BUFFER_MIB" default:"32" help:"Records each consumer group holds fetched and not yet applied, in MiB."`
	MemoryLimit      int64         `name:"memory-limit-mib" env:"SLUICE_MEMORY_LIMIT_MIB" default:"200" help:"Soft limit of the Go runtime's memory, in MiB (GOMEMLIMIT wins when set); 0 for none."`
	GCPercent        int           `name:"gc-percent" env:"SLUICE_GC_PERCENT" default:"400" help:"Heap growth between collections, in percent of the live heap (GOGC wins when set); the memory limit caps it."`
}

func (g *Globals) pipelineConfig(f RunFlags) (pipeline.Config, error) {
	cfg := pipeline.Config{
		DatabaseURL:      g.DatabaseURL,
		OwnerDatabaseURL: g.OwnerURL,
		AdminDatabaseURL: f.AdminURL,
		Kafka:            g.kafka(),
		SecretKey:        g.SecretKey,
		HTTPAddr:         f.HTTPAddr,
		TLSCert:          f.TLSCert,
		TLSKey:           f.TLSKey,
		AdminAddr:        f.AdminAddr,
		AdminTLSCert:     f.AdminTLSCert,
		AdminTLSKey:      f.AdminTLSKey,
		Topics:           g.topics(),
		Catalog:          g.catalog(),
		TopicSpec:        kafka.TopicSpec{Partitions: f.Partitions, Replication: f.Replication, Retention: f.Retention},
		Migrate:          f.Migrate,
		Dispatch:         dispatch.Config{URL: f.DispatchURL, Secret: f.DispatchSecret, Operational: f.DispatchOps},
		ShutdownGrace:    f.ShutdownGrace,
		Profiling:        f.Pprof,
		EventTypes:       g.eventTypes(),
		AppMigrations:    g.appMigrations(),
	}
	var err error
	if cfg.Effects, err = g.effects(); err != nil {
		return cfg, err
	}
	cfg.Consumer = consumers.Config{MaxAttempts: f.ConsumerAttempts, MaxBufferedBytes: f.ConsumerBuffer << 20,
		Transactions: f.ConsumerGroupTxs, SharePatience: f.SharePatience}
	cfg.ConsumerTransactions = f.ConsumerTxs
	cfg.IngestConfig.MaxBodyBytes = f.MaxBody
	cfg.IngestConfig.TenantMetrics = f.TenantMetrics
	cfg.IngestConfig.TenantRate, cfg.IngestConfig.TenantBurst = f.TenantRate, f.TenantBurst
	cfg.IngestConfig.Commit.Committers, cfg.IngestConfig.Commit.MaxBatch = f.Committers, f.CommitBatch
	cfg.IngestConfig.Shape = ingest.Shape{MaxDepth: f.MaxJSONDepth, MaxTokens: f.MaxJSONTokens}
	cfg.IngestConfig.Unverified = ingest.Unverified{MaxBytes: f.UnverifiedMiB << 20, MaxSourceBytes: f.UnverifiedSrcMiB << 20}
	for _, cidr := range f.TrustedProxies {
		if cidr = strings.TrimSpace(cidr); cidr == "" {
			continue
		}
		prefix, err := netip.ParsePrefix(cidr)
		if err != nil {
			return cfg, fmt.Errorf("--trusted-proxies: %w", err)
		}
		cfg.IngestConfig.TrustedProxies = append(cfg.IngestConfig.TrustedProxies, prefix)
	}
	if cfg.Lifecycle, err = f.lifecycle(); err != nil {
		return cfg, err
	}
	if cfg.Reconcile, err = f.ReconcileFlags.config(); err != nil {
		return cfg, err
	}
	cfg.ReconcileSchedule = f.Reconcile
	cfg.Deliver = f.Deliver
	if cfg.Delivery, err = f.DeliveryFlags.config(); err != nil {
		return cfg, err
	}
	if cfg.EndpointLimits, cfg.EndpointURLCheck, err = f.DeliveryFlags.endpoints(); err != nil {
		return cfg, err
	}
	cfg.Portal = f.PortalFlags.config()
	cfg.CDCConfig.Slot = f.Slot
	cfg.CDCConfig.Linger = f.RelayLinger
	cfg.CDCConfig.MissingTopicGrace = f.RelayTopicGrace
	cfg.CDCConfig.CreateMissingTopics = f.RelayCreate
	switch {
	case f.OutboxRetention < 0:
		return cfg, fmt.Errorf("--outbox-retention %s: want a duration, or 0 to keep rows", f.OutboxRetention)
	case f.OutboxRetention == 0:
		cfg.CDCConfig.KeepOutbox = true
	default:
		cfg.CDCConfig.Retention = f.OutboxRetention
	}
	return cfg, nil
}
