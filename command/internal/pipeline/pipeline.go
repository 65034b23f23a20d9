// Package pipeline assembles Sluice's stages into one process: ingest, the
// cdc relay and the consumer groups, each optional, sharing one Postgres
// pool, one metrics registry and one HTTP listener. `sluice serve` runs all
// of them; `sluice ingest|cdc|consume` run one. The stages never import each
// other: they meet only here, and in Postgres and Kafka.
//
// Lifecycle: Start fails only for what waiting cannot fix (configuration,
// Postgres unreachable, a key ring that cannot open the stored secrets).
// Kafka may be away at start: ingest serves meanwhile (it needs only
// Postgres), topics are created in the background with backoff, and the
// stages that read Kafka wait for them; /readyz names what is still
// missing. Once running, one stage failing for good stops the others: a
// half-running process would look healthy while losing work.
package pipeline

import (
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/sluicehq/sluice/command/internal/effects"
	"github.com/sluicehq/sluice/command/internal/operator/admin"
	"github.com/sluicehq/sluice/internal/cdc"
	"github.com/sluicehq/sluice/internal/consumers"
	"github.com/sluicehq/sluice/internal/consumers/delivery"
	"github.com/sluicehq/sluice/internal/consumers/dispatch"
	"github.com/sluicehq/sluice/internal/envelope"
	"github.com/sluicehq/sluice/internal/ingest"
	"github.com/sluicehq/sluice/internal/ingest/reconcile"
	"github.com/sluicehq/sluice/internal/kafka"
	"github.com/sluicehq/sluice/internal/provider/kinds"
	"github.com/sluicehq/sluice/internal/store/catalog"
	"github.com/sluicehq/sluice/internal/store/endpoints"
	"github.com/sluicehq/sluice/internal/store/lifecycle"
	"github.com/sluicehq/sluice/internal/telemetry"
)

// Config is one process's configuration.
type Config struct {
	DatabaseURL string
	Kafka       kafka.Config
	SecretKey   string
	HTTPAddr    string
	TLSCert     string
	TLSKey      string
	// AdminAddr is the operators' listener (every stage's readiness,
	// metrics, profiles); empty runs none. Bind it to a private address:
	// what it serves is not for the providers who reach HTTPAddr.
	AdminAddr    string
	AdminTLSCert string
	AdminTLSKey  string
	// AdminGroups register further resource groups on the admin API
	// (internal/operator/admin's package doc says how).
	AdminGroups []func(*admin.API)
	// AdminFailedAuthRate and AdminFailedAuthBurst bound failed
	// authentications per client address on the admin API
	// (admin.Config's); zero: its defaults (1/s, burst 10).
	AdminFailedAuthRate  float64
	AdminFailedAuthBurst int
	// Portal is the portal's listener (portal.go); its Addr empty: none.
	Portal    PortalConfig
	Topics    envelope.Topics
	TopicSpec kafka.TopicSpec
	// Which stages run here.
	Ingest, CDC, Consume bool
	// Migrate applies pending migrations at start, when the owner's
	// connection owns the schema; a runtime role never tries (roles.go).
	Migrate bool
	// OwnerDatabaseURL connects as the schema's owner, for the migrations
	// and the lifecycle manager (partitions need ownership); empty:
	// DatabaseURL, whose role then owns the schema (a superuser in dev).
	OwnerDatabaseURL string
	// AdminDatabaseURL connects the admin listener (admin API, console)
	// as a role of its own; empty: DatabaseURL, whose role then needs the
	// admin stage's privileges too.
	AdminDatabaseURL string

	IngestConfig ingest.Config
	CDCConfig    cdc.Config
	// Catalog configures tenants' own event types: the resource type
	// vocabulary (one shared topic each, created with Sluice's own) and
	// the limits. Its Topics and Builtin are the process's.
	Catalog catalog.Config
	// Lifecycle sets the storage horizons and partitions; its manager runs
	// in every process that ingests (one at a time works, by lock).
	Lifecycle lifecycle.Config
	// Reconcile tunes reconciliation in every process that ingests: the
	// admin API's runs by request and, with ReconcileSchedule, the schedule
	// (a source's lock lets one instance at a time reconcile it).
	Reconcile         reconcile.Config
	ReconcileSchedule bool
	// Consumer tunes every consumer group as it is: the assembly sets
	// each group's own parts (its id, topics, dead-letter topic, the
	// slots, tracing) and a group's MaxAttempts wins over it.
	Consumer consumers.Config
	// ConsumerTransactions bounds the batch transactions of all groups
	// together (consumers.NewSlots).
	ConsumerTransactions int
	// Effects are the binary's effect groups and the deployment's choice
	// (default: Sluice's built-in groups, every one); EventTypes its own
	// event types' schemas, beside the built-in ones.
	Effects    effects.Set
	EventTypes []fs.FS
	// AppMigrations is the binary's own schema, applied after Sluice's by
	// a process that migrates (nil: none).
	AppMigrations fs.FS
	// Dispatch configures the notifications dispatcher (off without a URL).
	Dispatch dispatch.Config
	// Deliver runs the deliverer of tenants' endpoints in a process that
	// consumes (the fan-out group always runs there); it needs SecretKey to
	// open the endpoints' signing secrets.
	Deliver  bool
	Delivery delivery.Config
	// EndpointLimits cap what tenants' endpoints may ask, and
	// EndpointURLCheck judges their URLs (the egress policy's CheckURL).
	EndpointLimits   endpoints.Limits
	EndpointURLCheck func(raw string) error
	// EndpointsRefresh is how soon the fan-out, the deliverer and ingest
	// (for types no handler knows) see an endpoint created or changed.
	// Default 5s.
	EndpointsRefresh time.Duration
	// FanOutIdle is how long no endpoint is enabled before the fan-out's
	// group stops reading (it starts again within EndpointsRefresh of one
	// being enabled). Default destinations.Idle.
	FanOutIdle time.Duration
	// ShutdownGrace bounds the wait for in-flight requests on stop. Default 20s.
	ShutdownGrace time.Duration
	// KafkaBackoff is the first pause between attempts to create the topics
	// while Kafka is unreachable, doubled up to 30s. Default 1s.
	KafkaBackoff time.Duration
	// Profiling serves /debug/pprof/ on the admin listener.
	Profiling bool
	// Tracing is handed to every stage (ingest's requests and commits, the
	// relay's produce, the consumers' records and effects, the
	// dispatcher's calls). The zero value is off: no stage installs any
	// instrumentation.
	Tracing telemetry.Tracing
}

// WithDefaults fills unset fields.
func (c Config) WithDefaults() Config {
	if c.ShutdownGrace <= 0 {
		c.ShutdownGrace = 20 * time.Second
	}
	if c.KafkaBackoff <= 0 {
		c.KafkaBackoff = time.Second
	}
	if c.IngestConfig.Providers == nil {
		// The process's one registry, which every store and stage the
		// assembly builds is handed: the shipped kinds.
		c.IngestConfig.Providers = kinds.Builtin()
	}
	if c.Effects.IsZero() {
		c.Effects = effects.Default()
	}
	return c
}

func (c Config) validate() error {
	if c.DatabaseURL == "" {
		return errors.New("SLUICE_DATABASE_URL is required")
	}
	if c.needsKafka() && len(c.Kafka.Brokers) == 0 {
		return errors.New("SLUICE_KAFKA_BROKERS is required for cdc and consume")
	}
	if c.Ingest && c.SecretKey == "" {
		return errors.New("SLUICE_SECRET_KEY is required to serve ingest (base64 of 32 random bytes; `make up` writes one to .run/env)")
	}
	if !c.Ingest && !c.CDC && !c.Consume {
		return errors.New("nothing to run")
	}
	if err := c.Lifecycle.Validate(); err != nil {
		return err
	}
	if err := c.Catalog.Validate(); err != nil {
		return err
	}
	// Bodies above the record limit travel by claim: a consumer reads them
	// from the inbox for as long as Kafka can replay (or a rewind reach)
	// their records.
	if payloads := c.Lifecycle.WithDefaults().PayloadHorizon; payloads < c.TopicSpec.Retention {
		return fmt.Errorf("payload horizon %s is shorter than the topics' retention %s: a rewind would find claimed bodies gone", payloads, c.TopicSpec.Retention)
	}
	if err := c.EndpointLimits.Validate(); err != nil {
		return err
	}
	// The listeners: the portal's beside the admin one.
	if err := errors.Join(c.validateDelivery(), c.Portal.validate(c.AdminAddr, c.HTTPAddr)); err != nil {
		return err
	}
	if c.Consume {
		return c.Dispatch.Validate()
	}
	return nil
}

// validateDelivery refuses a deliverer that could not sign, or whose
// retries would outlive the bodies they send.
func (c Config) validateDelivery() error {
	if !c.Consume || !c.Deliver {
		return nil
	}
	if c.SecretKey == "" {
		return errors.New("SLUICE_SECRET_KEY is required to deliver to tenants' endpoints (it opens their signing secrets); --no-deliver runs the consumers without the deliverer")
	}
	horizon, payloads := c.Delivery.WithDefaults().Horizon, c.Lifecycle.WithDefaults().PayloadHorizon
	if horizon > payloads {
		return fmt.Errorf("delivery horizon %s is longer than the payload horizon %s: late retries would find the bodies gone", horizon, payloads)
	}
	return nil
}

func (c Config) needsKafka() bool { return c.CDC || c.Consume }

// String describes which stages a configuration runs.
func (c Config) String() string {
	return fmt.Sprintf("ingest=%v cdc=%v consume=%v deliver=%v", c.Ingest, c.CDC, c.Consume, c.Consume && c.Deliver)
}
