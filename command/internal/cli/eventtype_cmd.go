package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/sluicehq/sluice/internal/store/catalog"
)

// EventTypeCmd groups the administration of tenants' own event types.
type EventTypeCmd struct {
	Create    EventTypeCreateCmd        `cmd:"" help:"Declare an event type of a tenant, or a new version of one; prints its dataschema URI."`
	List      EventTypeListCmd          `cmd:"" help:"List a tenant's event types (newest version of each)."`
	Show      EventTypeShowCmd          `cmd:"" help:"Show every version of one event type."`
	Deprecate EventTypeDeprecateCmd     `cmd:"" help:"Mark an event type deprecated (its events keep being validated and published)."`
	Release   EventTypeReleaseCmd       `cmd:"" help:"Validate again and publish the type's events stored unhandled or quarantined; prints how many."`
	Resources EventTypeResourceTypesCmd `cmd:"" name:"resource-types" help:"The deployment's resource types (one shared topic each): list, add."`
}

// typeRef names one event type.
type typeRef struct {
	Tenant string `required:"" help:"Tenant id." input:"uuid"`
	Kind   string `required:"" help:"Source kind the events come from (sluice source kinds), or api for POST /v1/events."`
	Type   string `required:"" name:"type" help:"Event type name, as the sender writes it (e.g. order.placed)."`
}

// EventTypeCreateCmd declares a type or a new version.
type EventTypeCreateCmd struct {
	Output
	typeRef
	SchemaFile      string `name:"schema-file" required:"" help:"JSON Schema 2020-12 of the event body (self-contained: no $ref to other documents); - reads stdin." input:"max=4096"`
	ResourceType    string `name:"resource-type" required:"" help:"Resource type the events are about: the middle of their Kafka key and their shared topic (<prefix>.tenant.<resource type>); see --tenant-resource-types."`
	ObjectID        string `name:"object-id" help:"Where the object id is: a JSON pointer (/data/id) or header:<Name>; default where the source's kind puts it."`
	EventTime       string `name:"event-time" help:"Where the event time is: a JSON pointer or header:<Name>; default where the source's kind puts it."`
	EventTimeFormat string `name:"event-time-format" enum:",unix,rfc3339,unix_or_rfc3339" default:"" help:"unix (default), rfc3339 or unix_or_rfc3339."`
	Compatible      bool   `default:"true" negatable:"" help:"A new version must accept every stored event the previous version accepted (checked before it is stored); --no-compatible accepts a break."`
}

func (c *EventTypeCreateCmd) Run(ctx context.Context, g *Globals) error {
	schema, err := readSchemaFile(c.SchemaFile)
	if err != nil {
		return err
	}
	s, done, err := g.catalogStore(ctx)
	if err != nil {
		return err
	}
	defer done()
	created, err := s.Create(ctx, catalog.Spec{TenantID: c.Tenant, Kind: c.Kind, Type: c.Type, Schema: schema,
		ObjectID: c.ObjectID, EventTime: c.EventTime, EventTimeFormat: c.EventTimeFormat, ResourceType: c.ResourceType,
		Compatible: c.Compatible})
	if err != nil {
		return err
	}
	if c.Output.Output == "json" {
		return json.NewEncoder(os.Stdout).Encode(created)
	}
	what := fmt.Sprintf("created %s.%s v%d", created.Kind, created.Type, created.Version)
	switch {
	case !created.New:
		what = fmt.Sprintf("unchanged: v%d already has this schema and these locations", created.Version)
	case created.Compatible:
		what += fmt.Sprintf(", compatible with v%d (%d stored events checked)", created.Version-1, created.Checked)
	}
	_, err = fmt.Printf("%s\n%s\ntopic %s\n", shown(created.DataSchema), shown(what), shown(created.Topic))
	return err
}

func readSchemaFile(path string) ([]byte, error) {
	var (
		raw []byte
		err error
	)
	if path == "-" {
		raw, err = io.ReadAll(io.LimitReader(os.Stdin, 16<<20))
	} else {
		raw, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, fmt.Errorf("--schema-file: %w", err)
	}
	return raw, nil
}

// EventTypeListCmd lists a tenant's types.
type EventTypeListCmd struct {
	Output
	Tenant string `required:"" help:"Tenant id." input:"uuid"`
	Kind   string `help:"Only this source kind."`
	All    bool   `help:"Include deprecated types."`
}

func (c *EventTypeListCmd) Run(ctx context.Context, g *Globals) error {
	s, done, err := g.catalogStore(ctx)
	if err != nil {
		return err
	}
	defer done()
	es, err := s.List(ctx, c.Tenant, catalog.Filter{Kind: c.Kind, Deprecated: c.All})
	if err != nil {
		return err
	}
	return c.entries(es)
}

// EventTypeShowCmd shows every version of a type.
type EventTypeShowCmd struct {
	Output
	typeRef
	Schema bool `help:"Print the newest version's schema alone (text output)."`
}

func (c *EventTypeShowCmd) Run(ctx context.Context, g *Globals) error {
	s, done, err := g.catalogStore(ctx)
	if err != nil {
		return err
	}
	defer done()
	es, err := s.Show(ctx, c.Tenant, c.Kind, c.Type)
	if err != nil {
		return err
	}
	if c.Schema && c.Output.Output != "json" {
		_, err := os.Stdout.Write(append(es[len(es)-1].Schema, '\n'))
		return err
	}
	return c.entries(es)
}

// EventTypeDeprecateCmd deprecates a type.
type EventTypeDeprecateCmd struct {
	Output
	typeRef
}

func (c *EventTypeDeprecateCmd) Run(ctx context.Context, g *Globals) error {
	s, done, err := g.catalogStore(ctx)
	if err != nil {
		return err
	}
	defer done()
	e, err := s.Deprecate(ctx, c.Tenant, c.Kind, c.Type)
	if err != nil {
		return err
	}
	if c.Output.Output == "json" {
		return json.NewEncoder(os.Stdout).Encode(e)
	}
	return c.entries([]catalog.Entry{e})
}

// EventTypeReleaseCmd publishes what was kept before the type existed.
type EventTypeReleaseCmd struct {
	Output
	typeRef
}

func (c *EventTypeReleaseCmd) Run(ctx context.Context, g *Globals) error {
	s, done, err := g.catalogStore(ctx)
	if err != nil {
		return err
	}
	defer done()
	r, err := s.Release(ctx, c.Tenant, c.Kind, c.Type)
	if err != nil {
		return err
	}
	if c.Output.Output == "json" {
		return json.NewEncoder(os.Stdout).Encode(r)
	}
	_, err = fmt.Printf("%d\nreleased %d events of %s.%s (validated by %s); %d still fail it and are quarantined; %d had no payload left\n",
		r.Released, r.Released, shown(r.Kind), shown(r.Type), shown(r.DataSchema), r.Quarantined, r.Expired)
	return err
}

// entries prints versions: one line each, or {"items": [...]}.
func (o Output) entries(es []catalog.Entry) error {
	if o.Output == "json" {
		if es == nil {
			es = []catalog.Entry{}
		}
		return json.NewEncoder(os.Stdout).Encode(map[string]any{"items": es})
	}
	t := newTable(os.Stdout, "KIND\tTYPE\tVERSION\tSTATUS\tRESOURCE TYPE\tOBJECT ID\tEVENT TIME\tCREATED")
	for _, e := range es {
		t.row(e.Kind, e.Type, e.Version, e.Status, e.ResourceType, orDefault(e.ObjectID), orDefault(e.EventTime),
			e.CreatedAt.UTC().Format("2006-01-02T15:04:05Z"))
	}
	return t.flush()
}

func orDefault(loc string) string {
	if loc == "" {
		return "(source default)"
	}
	return loc
}

// catalogStore opens the catalogue with this deployment's vocabulary and
// limits.
func (g *Globals) catalogStore(ctx context.Context) (*catalog.Store, func(), error) {
	pool, err := g.pool(ctx)
	if err != nil {
		return nil, nil, err
	}
	cfg := g.catalog()
	stored, err := catalog.StoredResourceTypes(ctx, pool)
	if err == nil && len(stored) > 0 {
		err = catalog.SameResourceTypes(cfg.ResourceTypes, stored)
		cfg.ResourceTypes = stored
	}
	if err != nil {
		pool.Close()
		return nil, nil, err
	}
	s, err := catalog.New(pool, cfg)
	if err != nil {
		pool.Close()
		return nil, nil, err
	}
	return s, pool.Close, nil
}

// EventTypeResourceTypesCmd groups the deployment's resource types.
type EventTypeResourceTypesCmd struct {
	List ResourceTypesListCmd `cmd:"" help:"List the deployment's resource types (one shared topic each)."`
	Add  ResourceTypesAddCmd  `cmd:"" help:"Add a resource type; restart the processes so they create and read its topic."`
}

// ResourceTypesListCmd prints the deployment's resource types.
type ResourceTypesListCmd struct {
	Output
}

func (c *ResourceTypesListCmd) Run(ctx context.Context, g *Globals) error {
	pool, err := g.pool(ctx)
	if err != nil {
		return err
	}
	defer pool.Close()
	names, err := catalog.StoredResourceTypes(ctx, pool)
	if err != nil {
		return err
	}
	if len(names) == 0 {
		names = catalog.DefaultResourceTypes // what the first process will store
	}
	topics := g.topics()
	return printList(c.Output, names, "", "RESOURCE TYPE\tTOPIC", func(n string) []any { return []any{n, topics.Tenant(n)} })
}

// ResourceTypesAddCmd adds one resource type.
type ResourceTypesAddCmd struct {
	Name string `arg:"" help:"The resource type: 1 to 48 lowercase letters, digits or '_', starting with a letter." input:"max=48"`
}

func (c *ResourceTypesAddCmd) Run(ctx context.Context, g *Globals) error {
	pool, err := g.pool(ctx)
	if err != nil {
		return err
	}
	defer pool.Close()
	if err := catalog.AddResourceType(ctx, pool, c.Name); err != nil {
		return err
	}
	_, err = fmt.Printf("added %s (topic %s); restart the processes to create and read its topic\n", shown(c.Name), shown(g.topics().Tenant(c.Name)))
	return err
}
