package admin

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"

	"github.com/danielgtaylor/huma/v2"

	"github.com/sluicehq/sluice/internal/audit"
	"github.com/sluicehq/sluice/internal/store/catalog"
)

// CatalogRoutes is the resource group of tenants' own event types
// (internal/store/catalog): list, create (a new type or version), show every
// version, deprecate, and release the events stored before the type
// existed. A type is named by its source kind and name inside its tenant's
// path, so the tenant's owner confines it.
func CatalogRoutes(s *catalog.Store) func(*API) {
	return func(a *API) {
		a.Within("source_kind", "tenant_id")
		a.Within("event_type", "tenant_id")
		eventTypeRoutes(a, s)
		cfg := s.Config()
		stateEnum[NewEventTypeBody](a, "source_kind", kindNames(cfg.Providers, catalog.KindAPI))
		stateEnum[NewEventTypeBody](a, "resource_type", cfg.ResourceTypes)
	}
}

// EventTypePath names one of a tenant's event types.
type EventTypePath struct {
	TenantPath
	Kind string `path:"source_kind" doc:"The source kind the type is declared for (stripe, hmac, ...), or api."`
	Type string `path:"event_type" doc:"The type's name, e.g. order.placed."`
}

// EventType is one version of a tenant's event type, its schema as JSON.
type EventType struct {
	catalog.Entry
	Schema json.RawMessage `json:"schema" doc:"The JSON Schema (2020-12) of this version."`
}

func eventType(e catalog.Entry) EventType { return EventType{Entry: e, Schema: e.Schema} }

func eventTypes(es []catalog.Entry) []EventType {
	out := make([]EventType, len(es))
	for i, e := range es {
		out[i] = eventType(e)
	}
	return out
}

// NewEventTypeBody declares a type or a new version of one.
type NewEventTypeBody struct {
	Kind            string          `json:"source_kind" doc:"A source kind of this build's (its provider registry), or api."`
	Type            string          `json:"event_type" minLength:"1" maxLength:"128" doc:"The type's name, as the events carry it (e.g. order.placed): letters, digits, '.', '_' or '-', starting with a letter or digit."`
	Schema          json.RawMessage `json:"schema" doc:"JSON Schema 2020-12 as an object, self-contained (no remote $ref); no string in it may hold NUL. A schema that does not compile is refused (422)."`
	ResourceType    string          `json:"resource_type" doc:"The resource type its events are keyed and routed by: one of the deployment's (SLUICE_TENANT_RESOURCE_TYPES)."`
	ObjectID        string          `json:"object_id_at,omitempty" doc:"Where the object id is: a JSON pointer (/data/id) or header:<Name>; absent: the source kind's place."`
	EventTime       string          `json:"event_time_at,omitempty" doc:"Where the event time is, like object_id_at."`
	EventTimeFormat string          `json:"event_time_format,omitempty" enum:"unix,rfc3339,unix_or_rfc3339" doc:"How the event time is written; absent: unix."`
	Compatible      bool            `json:"compatible,omitempty" doc:"A new version must accept every stored event the previous one accepted (checked before it is stored)."`
}

// TransformSchema states what the catalogue's check says of a spec and a
// schema can: the type's grammar, a schema that is an object (never
// null), event_time_format only beside event_time_at.
func (NewEventTypeBody) TransformSchema(_ huma.Registry, s *huma.Schema) *huma.Schema {
	if p := s.Properties["event_type"]; p != nil {
		p.Pattern, p.PatternDescription = catalog.TypePattern, "an event type's name (e.g. order.placed)"
	}
	if p := s.Properties["schema"]; p != nil {
		p.Type = huma.TypeObject
	}
	s.DependentRequired = map[string][]string{"event_time_format": {"event_time_at"}}
	return s
}

// Resolve refuses a schema holding what no stored text may (NUL).
func (b *NewEventTypeBody) Resolve(huma.Context) []error {
	return checkJSONText("body.schema", b.Schema)
}

func eventTypeRoutes(a *API, s *catalog.Store) {
	type listIn struct {
		TenantPath
		Kind       string `query:"source_kind" doc:"Only types of this source kind."`
		Deprecated bool   `query:"deprecated" doc:"Include deprecated types."`
	}
	Handle(a, Route{Op: op("list-event-types", http.MethodGet, "/tenants/{tenant_id}/event-types",
		"The tenant's event types, newest version of each", "event-types"), Scope: ScopeTenant},
		func(ctx context.Context, c Call, in *listIn) (*listOut[EventType], error) {
			// An unknown tenant is 404, not an empty list (a scoped token's
			// owner check does this before; an unscoped one's does not run).
			if _, err := c.Store.Tenant(ctx, in.TenantID); err != nil {
				return nil, err
			}
			es, err := s.List(ctx, in.TenantID, catalog.Filter{Kind: in.Kind, Deprecated: in.Deprecated})
			return list(eventTypes(es), ""), err
		})
	type createIn struct {
		TenantPath
		Body NewEventTypeBody
	}
	type createOut struct {
		Location string `header:"Location" doc:"Where the type's versions are read (GET)."`
		Body     struct {
			EventType
			New bool `json:"new" doc:"false: the spec equals the newest version and nothing was stored (running a create twice is safe)."`
		}
	}
	create := op("create-event-type", http.MethodPost, "/tenants/{tenant_id}/event-types",
		"Declare an event type, or a new version of one (validated first; ingest uses it within 5 s)", "event-types")
	create.DefaultStatus = http.StatusCreated
	Handle(a, Route{Op: create, Scope: ScopeTenant, Resource: "event_type", Action: "event_type.create"},
		func(ctx context.Context, c Call, in *createIn) (*createOut, error) {
			b := in.Body
			created, err := s.Create(ctx, catalog.Spec{TenantID: in.TenantID, Kind: b.Kind, Type: b.Type, Schema: b.Schema,
				ObjectID: b.ObjectID, EventTime: b.EventTime, EventTimeFormat: b.EventTimeFormat, ResourceType: b.ResourceType,
				Compatible: b.Compatible})
			if err != nil {
				return nil, err
			}
			out := &createOut{Location: Prefix + "/tenants/" + in.TenantID + "/event-types/" + url.PathEscape(b.Kind) + "/" + url.PathEscape(b.Type)}
			out.Body.EventType, out.Body.New = eventType(created.Entry), created.New
			if created.New {
				a.record(ctx, c, audit.Target{Action: "event_type.create", Resource: "event_type",
					ID: b.Kind + "." + b.Type, TenantID: in.TenantID})
			}
			return out, nil
		})
	Handle(a, Route{Op: op("get-event-type", http.MethodGet, "/tenants/{tenant_id}/event-types/{source_kind}/{event_type}",
		"Every version of one event type, oldest first", "event-types"), Scope: ScopeTenant},
		func(ctx context.Context, c Call, in *EventTypePath) (*listOut[EventType], error) {
			es, err := s.Show(ctx, in.TenantID, in.Kind, in.Type)
			return list(eventTypes(es), ""), err
		})
	Handle(a, Route{Op: op("deprecate-event-type", http.MethodPost, "/tenants/{tenant_id}/event-types/{source_kind}/{event_type}/deprecate",
		"Mark an event type deprecated (still validated and published; a new version makes it active)", "event-types"),
		Scope: ScopeTenant, Resource: "event_type", Action: "event_type.deprecate"},
		func(ctx context.Context, c Call, in *EventTypePath) (*body[EventType], error) {
			e, err := s.Deprecate(ctx, in.TenantID, in.Kind, in.Type)
			if err != nil {
				return nil, err
			}
			a.record(ctx, c, audit.Target{Action: "event_type.deprecate", Resource: "event_type", ID: in.Kind + "." + in.Type, TenantID: in.TenantID})
			return reply(eventType(e)), nil
		})
	Handle(a, Route{Op: op("release-event-type", http.MethodPost, "/tenants/{tenant_id}/event-types/{source_kind}/{event_type}/release",
		"Publish the tenant's events of this type stored unhandled or quarantined, each once, with the counts", "event-types"),
		Scope: ScopeTenant, Resource: "event_type", Action: "event_type.release"},
		func(ctx context.Context, c Call, in *EventTypePath) (*body[catalog.Released], error) {
			r, err := s.Release(ctx, in.TenantID, in.Kind, in.Type)
			if err != nil {
				return nil, err
			}
			a.record(ctx, c, audit.Target{Action: "event_type.release", Resource: "event_type", ID: in.Kind + "." + in.Type, TenantID: in.TenantID})
			return reply(r), nil
		})
}
