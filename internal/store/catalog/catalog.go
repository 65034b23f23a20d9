// Package catalog is the runtime catalogue of tenants' own event types: what a
// tenant declares it sends (a JSON Schema per type and version, where the
// object id and event time are, the resource type its events are keyed and
// routed by), stored in Postgres so every instance sees a change within
// seconds, with no rebuild.
//
// The built-in schemas (package schemas) stay the defaults that ship with
// Sluice. A tenant's entry adds a type for that tenant's events only; it never
// replaces a built-in type of its source kind (Create refuses the name) and
// never routes into Sluice's own topics: tenant types publish to one shared
// topic per resource type, <prefix>.tenant.<resource_type>, from a bounded
// vocabulary (Config.ResourceTypes), so the topic count does not grow with
// tenants or types.
//
// Store's operations (Create, List, Show, Deprecate, Release) are what the
// command line and the admin API call; their refusals are internal/refusal's,
// with a kind and sub-kind a caller can branch on (errors.go) and a message
// a person can act on. Ingest reads the catalogue through Types and
// Compiled.
package catalog

import (
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sluicehq/sluice/internal/envelope"
	"github.com/sluicehq/sluice/internal/provider"
	"github.com/sluicehq/sluice/schemas"
)

// DefaultResourceTypes is the resource type vocabulary when none is
// configured: one shared topic each.
var DefaultResourceTypes = []string{
	"account", "customer", "document", "event", "message", "order",
	"payment", "product", "shipment", "subscription", "ticket", "user",
}

// Config tunes the catalogue. The zero value is usable.
type Config struct {
	// MaxTypesPerTenant caps the event types one tenant may declare
	// (deprecated ones count: their names stay taken). Default 200.
	MaxTypesPerTenant int
	// MaxSchemaBytes caps one schema document. Default 64 KiB.
	MaxSchemaBytes int
	// ResourceTypes is the vocabulary of resource types, each one shared
	// topic (<prefix>.tenant.<name>). It must be the same on every process
	// of a deployment (like the topic prefix): the processes that create
	// topics create these, and ingest quarantines an event whose entry
	// names a resource type outside it. Default DefaultResourceTypes.
	ResourceTypes []string
	// CompatCheckLimit bounds the stored payloads a compatible new version
	// is checked against, newest first; more held than that are left
	// unchecked (and the version records how many it checked). Default
	// 100,000 (about two seconds of validation for 1 KiB bodies).
	CompatCheckLimit int
	// ReleaseBatch is how many events one release transaction publishes.
	// Default 500.
	ReleaseBatch int
	// MaxCompiled bounds the compiled schemas kept in memory (by version,
	// least recently used out first). Default 1024.
	MaxCompiled int
	// Topics names the topics a release publishes to.
	Topics envelope.Topics
	// Providers are the source kinds a type may be declared for, besides
	// api: the process's registry (provider.Registry says who chooses it);
	// nil knows no kind but api.
	Providers *provider.Registry
	// Builtin is the binary's own catalogue, whose names a tenant cannot
	// take. Default: schemas.Load().
	Builtin *schemas.Catalogue
}

// WithDefaults fills unset fields.
func (c Config) WithDefaults() (Config, error) {
	if c.MaxTypesPerTenant <= 0 {
		c.MaxTypesPerTenant = 200
	}
	if c.MaxSchemaBytes <= 0 {
		c.MaxSchemaBytes = 64 << 10
	}
	if len(c.ResourceTypes) == 0 {
		c.ResourceTypes = DefaultResourceTypes
	}
	if c.CompatCheckLimit <= 0 {
		c.CompatCheckLimit = 100_000
	}
	if c.ReleaseBatch <= 0 {
		c.ReleaseBatch = 500
	}
	if c.MaxCompiled <= 0 {
		c.MaxCompiled = 1024
	}
	if c.Builtin == nil {
		b, err := schemas.Load()
		if err != nil {
			return c, err
		}
		c.Builtin = b
	}
	return c, c.Validate()
}

// Validate checks what a caller set: the resource types' names.
func (c Config) Validate() error {
	for _, rt := range c.ResourceTypes {
		if !resourceTypeName.MatchString(rt) {
			return fmt.Errorf("catalog: resource type %q: %s", rt, resourceTypeRule)
		}
	}
	return nil
}

// TenantTopics are the shared topics of the vocabulary: what a process that
// creates topics adds to Sluice's own.
func (c Config) TenantTopics() []string {
	rts := c.ResourceTypes
	if len(rts) == 0 {
		rts = DefaultResourceTypes
	}
	out := make([]string, 0, len(rts))
	for _, rt := range rts {
		out = append(out, c.Topics.Tenant(rt))
	}
	return out
}

// HasResourceType reports whether rt has a topic in this deployment.
func (c Config) HasResourceType(rt string) bool { return slices.Contains(c.ResourceTypes, rt) }

// Store reads and writes the catalogue.
type Store struct {
	pool     *pgxpool.Pool
	cfg      Config
	compiled *compiledCache
}

// New returns a Store over pool.
func New(pool *pgxpool.Pool, cfg Config) (*Store, error) {
	cfg, err := cfg.WithDefaults()
	if err != nil {
		return nil, err
	}
	cc, err := newCompiledCache(cfg.MaxCompiled)
	if err != nil {
		return nil, err
	}
	return &Store{pool: pool, cfg: cfg, compiled: cc}, nil
}

// Config returns the store's configuration, defaults filled in.
func (s *Store) Config() Config { return s.cfg }

// Status is an event type's state.
type Status string

const (
	// StatusActive: validated and published.
	StatusActive Status = "active"
	// StatusDeprecated: still validated and published exactly as before
	// (deprecating never breaks a sender), marked so its users move on, and
	// left out of List unless asked. A new version makes it active again.
	StatusDeprecated Status = "deprecated"
)

// KindAPI is the kind of a tenant's own first-party events (POST /v1/events).
const KindAPI = string(provider.KindAPI)

// Entry is one version of a tenant's event type.
type Entry struct {
	ID        int64  `json:"id"`         // the event type
	VersionID int64  `json:"version_id"` // this version
	TenantID  string `json:"tenant_id"`
	Kind      string `json:"source_kind"` // a provider kind, or api
	Type      string `json:"event_type"`
	Version   int    `json:"version"`
	// ResourceType is the middle of the Kafka key (tenant/resource
	// type/object id) and names the shared topic; fixed for the type.
	ResourceType string `json:"resource_type"`
	Topic        string `json:"topic"`
	// DataSchema is the ce_dataschema records validated by this version carry.
	DataSchema string `json:"dataschema"`
	// ObjectID and EventTime locate the object id and the event time: a JSON
	// pointer into the body ("/data/id") or "header:<Name>"; empty: where the
	// source's kind puts them. EventTimeFormat is unix, rfc3339 or
	// unix_or_rfc3339.
	ObjectID        string `json:"object_id_at,omitempty"`
	EventTime       string `json:"event_time_at,omitempty"`
	EventTimeFormat string `json:"event_time_format,omitempty"`
	// Compatible: this version had to accept what the previous one
	// accepted; Checked is how many stored payloads proved it.
	Compatible bool      `json:"compatible"`
	Checked    int       `json:"checked"`
	Status     Status    `json:"status"`
	Schema     []byte    `json:"schema"`
	CreatedAt  time.Time `json:"created_at"`
}
