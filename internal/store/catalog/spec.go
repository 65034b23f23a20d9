package catalog

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/google/uuid"

	"github.com/sluicehq/sluice/internal/envelope"
	"github.com/sluicehq/sluice/internal/provider"
	"github.com/sluicehq/sluice/schemas"
)

// Spec is what a tenant declares: a new type, or a new version of one.
type Spec struct {
	TenantID string
	Kind     string // a source kind (sluice source kinds), or api
	Type     string
	Schema   []byte // JSON Schema 2020-12, self-contained
	// ObjectID and EventTime: a JSON pointer into the body or
	// header:<Name> (not for api, whose events have no headers of their
	// own); empty: where the source's kind puts them. They win over the
	// source's defaults. EventTimeFormat: unix (default), rfc3339 or
	// unix_or_rfc3339.
	ObjectID, EventTime, EventTimeFormat string
	// ResourceType is one of Config.ResourceTypes; fixed for the type's
	// life (a new version must name the same).
	ResourceType string
	// Compatible, for a new version: it must accept every stored event the
	// previous version accepted, and Create checks that before storing it.
	// Ignored for a first version.
	Compatible bool
}

// TypePattern is the grammar of an event type's name (ECMA-262 and RE2
// alike), for the admin API's document to state.
const TypePattern = `^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`

var (
	// Type names travel in ce_type, ce_dataschema and keys: letters,
	// digits, '.', '_' and '-', as providers' own names are.
	typeName     = regexp.MustCompile(TypePattern)
	typeNameRule = "want 1 to 128 letters, digits, '.', '_' or '-', starting with a letter or digit (e.g. order.placed)"
	// Resource types name topics: no '.', so sluice.tenant.<x> can never be
	// one of Sluice's own topics.
	resourceTypeName = regexp.MustCompile(`^[a-z][a-z0-9_]{0,47}$`)
	resourceTypeRule = "want 1 to 48 lowercase letters, digits or '_', starting with a letter (e.g. order)"
)

// check judges a spec before anything is read or stored, and compiles its
// schema. It returns the compiled entry the spec describes (version and ids
// unset).
func (s *Store) check(sp Spec) (*schemas.Entry, error) {
	if _, err := uuid.Parse(sp.TenantID); err != nil {
		return nil, invalid("tenant", "%q is not a tenant id (a uuid, as `sluice tenant create` prints it)", sp.TenantID)
	}
	if err := s.checkKind(sp.Kind); err != nil {
		return nil, err
	}
	if !typeName.MatchString(sp.Type) {
		return nil, invalid("event_type", "%q: %s", sp.Type, typeNameRule)
	}
	if _, builtin := s.cfg.Builtin.Lookup(sp.Kind, sp.Type); builtin {
		refused := ErrBuiltin.With("%s.%s is a built-in type: Sluice validates and routes it already, for every tenant; declare your own under another name", sp.Kind, sp.Type)
		refused.Field = "event_type"
		return nil, refused
	}
	if !resourceTypeName.MatchString(sp.ResourceType) {
		return nil, invalid("resource_type", "%q: %s", sp.ResourceType, resourceTypeRule)
	}
	if !s.cfg.HasResourceType(sp.ResourceType) {
		return nil, invalid("resource_type", "%q is not a resource type of this deployment; choose one of %s (sluice eventtype resource-types list)",
			sp.ResourceType, strings.Join(s.cfg.ResourceTypes, ", "))
	}
	if err := checkLocations(sp); err != nil {
		return nil, err
	}
	if len(sp.Schema) == 0 {
		return nil, invalid("schema", "a JSON Schema is required")
	}
	if len(sp.Schema) > s.cfg.MaxSchemaBytes {
		return nil, invalid("schema", "%d bytes, more than the %d allowed; move repeated parts under $defs", len(sp.Schema), s.cfg.MaxSchemaBytes)
	}
	e := s.schemaEntry(sp.TenantID, sp.Kind, sp.Type, 0, sp.ResourceType, sp.ObjectID, sp.EventTime, sp.EventTimeFormat)
	compiled, err := schemas.Compile(e, compileID(sp.TenantID, sp.Kind, sp.Type, 0), sp.Schema)
	if err != nil {
		// Its messages name the schema already ("schema does not compile: ...").
		return nil, invalid("", "%s", err.Error())
	}
	return compiled, nil
}

func (s *Store) checkKind(kind string) error {
	if kind == KindAPI {
		return nil
	}
	if _, ok := s.cfg.Providers.Get(provider.Kind(kind)); !ok {
		kinds := []string{KindAPI}
		for _, k := range s.cfg.Providers.Kinds() {
			kinds = append(kinds, string(k))
		}
		return invalid("source_kind", "%q is not a source kind; want one of %s", kind, strings.Join(kinds, ", "))
	}
	return nil
}

// checkLocations judges where the object id and the event time are said
// to be.
func checkLocations(sp Spec) error {
	if err := checkLocation("object_id_at", sp.ObjectID, sp.Kind); err != nil {
		return err
	}
	if err := checkLocation("event_time_at", sp.EventTime, sp.Kind); err != nil {
		return err
	}
	switch sp.EventTimeFormat {
	case "", schemas.TimeUnix, schemas.TimeRFC3339, schemas.TimeUnixOrRFC3339:
	default:
		return invalid("event_time_format", "%q: want %s, %s or %s", sp.EventTimeFormat, schemas.TimeUnix, schemas.TimeRFC3339, schemas.TimeUnixOrRFC3339)
	}
	if sp.EventTimeFormat != "" && sp.EventTime == "" {
		return invalid("event_time_format", "needs event_time_at, the place it describes")
	}
	return nil
}

// checkLocation accepts "", a JSON pointer (RFC 6901) or header:<Name>.
func checkLocation(field, loc, kind string) error {
	switch name, isHeader := strings.CutPrefix(loc, "header:"); {
	case loc == "":
		return nil
	case isHeader && kind == KindAPI:
		return invalid(field, "api events have no headers of their own; point into the event (e.g. /data/id)")
	case isHeader:
		if name == "" || strings.ContainsAny(name, " :\t\r\n") || len(name) > 128 {
			return invalid(field, "%q: want header:<Name> with a header name, e.g. header:X-Object-Id", loc)
		}
		return nil
	case !strings.HasPrefix(loc, "/"):
		return invalid(field, "%q: want a JSON pointer such as /data/id, or header:<Name>", loc)
	case strings.Contains(strings.ReplaceAll(strings.ReplaceAll(loc, "~0", ""), "~1", ""), "~"):
		return invalid(field, "%q: '~' must be written ~0 and '/' inside a name ~1 (RFC 6901)", loc)
	case len(loc) > 512:
		return invalid(field, "longer than 512 bytes")
	}
	return nil
}

// schemaEntry is what ingest needs to know of a version besides its schema.
// Its topic suffix makes Topics.Resource(Topic) the shared tenant topic
// (Topics.Tenant).
func (s *Store) schemaEntry(tenant, kind, typ string, version int, rt, objectID, eventTime, format string) schemas.Entry {
	return schemas.Entry{
		Kind: kind, Type: typ, Version: version, ObjectType: rt, Topic: "tenant." + rt,
		ObjectIDPointer: objectID, EventTimePointer: eventTime, EventTimeFormat: format,
		DataSchema: envelope.DataSchemaURI(tenant, kind, typ, version), Tenant: tenant,
	}
}

// compileID is the base a version's schema is compiled under: hierarchical,
// so a relative $ref ("other.json") resolves to another URL, which the
// compiler refuses to load like any other (schemas.ErrRemoteRef); .invalid,
// so nothing could ever answer it.
func compileID(tenant, kind, typ string, version int) string {
	return fmt.Sprintf("https://sluice.invalid/eventtype/%s/%s/%s/v%d.json", tenant, kind, typ, version)
}
