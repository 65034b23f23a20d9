package admin

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/sluicehq/sluice/command/internal/operator/input"
	"github.com/sluicehq/sluice/command/internal/operator/testevent"
	"github.com/sluicehq/sluice/internal/audit"
	"github.com/sluicehq/sluice/internal/refusal"
	"github.com/sluicehq/sluice/internal/store/endpoints"
)

// EndpointTester sends a signed test event to an endpoint, a delivery of
// its own, and returns the attempt (the deliverer implements it); the
// zero TestEvent is the synthetic sluice.test.
type EndpointTester interface {
	TestEndpoint(ctx context.Context, endpointID string, ev endpoints.TestEvent) (endpoints.Attempt, error)
}

// TestExamples builds a test event's body of a chosen type
// (testevent.Builder implements it).
type TestExamples interface {
	Build(ctx context.Context, tenant, eventType string) (testevent.Example, error)
}

// DestinationRoutes is the resource group of tenants' endpoints
// (internal/store/endpoints): create (its signing secret shown once),
// list, read with its figures, change, disable, enable, delete, rotate
// the secret, and send a test event through t (nil: the test route answers
// 503). Every route is tenant-scoped: a scoped token manages its own
// tenant's endpoints, within the deployment's caps like everyone else
// (the store enforces them).
func DestinationRoutes(s *endpoints.Store, t EndpointTester, ex TestExamples) func(*API) {
	return func(a *API) {
		a.Owner("endpoint_id", "endpoint", func(ctx context.Context, id string) (string, error) {
			tenant, err := s.TenantOf(ctx, id)
			return tenant, err
		})
		r := endpointRouter{a: a, s: s, tester: t, examples: ex}
		r.create()
		r.read()
		r.change()
		r.secrets()
		r.stateCaps()
		r.health()
	}
}

// stateCaps writes the deployment's caps into the document's bounds of
// rate_per_second and concurrency (the tags say the default caps), so a
// client and huma's validation know this deployment's.
func (r endpointRouter) stateCaps() {
	limits := r.s.Limits.WithDefaults()
	reg := r.a.api.OpenAPI().Components.Schemas
	for _, o := range []*huma.Operation{r.a.registered(http.MethodPost, Prefix+"/tenants/{tenant_id}/endpoints"),
		r.a.registered(http.MethodPatch, Prefix+"/endpoints/{endpoint_id}")} {
		for _, mt := range o.RequestBody.Content {
			body := deref(reg, mt.Schema)
			for name, limit := range map[string]int{"rate_per_second": limits.MaxRate, "concurrency": limits.MaxConcurrency} {
				if p := deref(reg, body.Properties[name]); p != nil {
					p.Maximum = ptr(float64(limit))
					p.PrecomputeMessages()
				}
			}
			// A deployment that refuses plain http says so in the URL's
			// pattern (the address policy, which resolves names, cannot).
			if p := deref(reg, body.Properties["url"]); p != nil && !limits.AllowHTTP {
				p.Pattern = strings.Replace(p.Pattern, "^(https?|amqps?|kafka)://", "^(https|amqps|kafka)://", 1)
				p.PatternDescription = strings.Replace(p.PatternDescription, "http(s), amqp(s)", "https, amqps", 1)
				p.PrecomputeMessages()
			}
		}
	}
}

// EndpointPath names one endpoint.
type EndpointPath struct {
	EndpointID string `path:"endpoint_id" format:"uuid" doc:"Endpoint id."`
}

// EndpointFilter is one event-type pattern of an endpoint, as the
// document states it (endpoints.CheckFilter).
type EndpointFilter string

func (EndpointFilter) Schema(huma.Registry) *huma.Schema {
	return &huma.Schema{Type: huma.TypeString, MinLength: ptr(1), MaxLength: ptr(endpoints.MaxFilterLength),
		Pattern: `^(\*|[a-z0-9_-]+(\.[a-z0-9_-]+)*(\.\*)?)$`, PatternDescription: `"*", an event type (stripe.invoice.paid) or a prefix ending in ".*"`,
		Description: `An event-type pattern: "*" (every event), an exact type, or a prefix ending in ".*" (stripe.invoice.*).`}
}

// EndpointHeaders are an endpoint's static headers, as the document states
// them; names are HTTP tokens, and the ones Sluice sets are refused (422).
type EndpointHeaders map[string]string

func (EndpointHeaders) Schema(huma.Registry) *huma.Schema {
	return &huma.Schema{Type: huma.TypeObject, MaxProperties: ptr(endpoints.MaxHeaders),
		AdditionalProperties: &huma.Schema{Type: huma.TypeString, MaxLength: ptr(endpoints.MaxHeaderBytes), MinLength: ptr(0),
			Pattern: input.TextPattern, PatternDescription: input.TextPatternDescription},
		Description: "Static headers sent on every request (sealed, never shown again: reads list their names). At most 20, names and values 4 KiB in all; " +
			"names are HTTP tokens; webhook-*, ce-*, content-type, content-length, host, traceparent, tracestate, user-agent and hop-by-hop headers are Sluice's (422). Authorization is allowed."}
}

func filters(fs []EndpointFilter) []string {
	if fs == nil {
		return nil
	}
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = string(f)
	}
	return out
}

// NewEndpointBody is an endpoint to create.
type NewEndpointBody struct {
	URL                  string                       `json:"url" maxLength:"2048" pattern:"^(https?|amqps?|kafka)://([A-Za-z0-9._~-]+|\\[[0-9A-Fa-f:.]+\\])(:[0-9]{1,5})?([/?][^\\s#\\x00-\\x1F\\x7F-\\x9F]*)?$" patternDescription:"an absolute http(s), amqp(s) or kafka URL without user info or fragment" doc:"Where events are sent: for kind http an https URL they are POSTed to (http only where the deployment allows it); for rabbitmq amqps://host[:port][/vhost]; for kafka kafka://seed-broker:port; for sqs the queue's URL, https://sqs.region.amazonaws.com/account/queue (amqp://, kafka:// without TLS and http:// only where plain http is allowed). No user info (credentials are given apart, sealed), no fragment; private and loopback addresses are refused (422)."`
	Description          string                       `json:"description,omitempty" minLength:"0" maxLength:"500" doc:"For people (at most 500 characters)."`
	Filters              []EndpointFilter             `json:"filters" nullable:"false" minItems:"1" maxItems:"64" doc:"The event types delivered (repeats are dropped)."`
	Ordered              *bool                        `json:"ordered,omitempty" doc:"Deliver in order per resource (default true); false sends in parallel."`
	Rate                 int                          `json:"rate_per_second,omitempty" minimum:"0" doc:"Requests per second (at most the deployment's cap); absent or 0: the deployment's default."`
	Concurrency          int                          `json:"concurrency,omitempty" minimum:"0" doc:"Requests in flight (at most the deployment's cap); absent or 0: the deployment's default."`
	Headers              EndpointHeaders              `json:"headers,omitempty"`
	Expression           string                       `json:"expression,omitempty" minLength:"0" maxLength:"2048" pattern:"^[^\\x00-\\x08\\x0B\\x0C\\x0E-\\x1F\\x7F-\\x9F]*$" patternDescription:"text without NUL or control characters but tab and line breaks" doc:"A CEL expression over the event (id, type, source, subject, time, tenant_id, source_account, body, data): of the events its filters take, the endpoint takes those it yields true for. Checked now: one that does not compile or yields no bool is refused (422) with where and why. Absent: every event of its filters."`
	Transformation       string                       `json:"transformation,omitempty" minLength:"0" maxLength:"4096" pattern:"^[^\\x00-\\x08\\x0B\\x0C\\x0E-\\x1F\\x7F-\\x9F]*$" patternDescription:"text without NUL or control characters but tab and line breaks" doc:"A CEL expression over the event (the variables of expression) yielding a map: the JSON object sent, and signed, in place of the event's body, e.g. {\"id\": data.object.id, \"amount\": data.object.amount_paid, \"kind\": type}. Checked now (one that does not compile or yields no map is refused, 422) and tried on transformation_sample, or else on the tenant's last event of a type the endpoint takes: one that fails there is refused (422) with its reason. At most 256 KiB of output, and the filters' cost limit. Absent: the body as received."`
	TransformationSample map[string]any               `json:"transformation_sample,omitempty" doc:"An event body (a JSON object) to try the transformation on, its envelope id sample, type the first filter, tenant_id the tenant's. Absent: the tenant's last event of a type the endpoint takes, if any."`
	Kind                 endpoints.Kind               `json:"kind,omitempty" enum:"http,rabbitmq,kafka,sqs" default:"http" doc:"What events are sent to: http (a signed POST), rabbitmq (a persistent message published to an exchange, confirmed by the server), kafka (a record produced to a topic of the tenant's cluster, keyed by resource), sqs (a message sent to an SQS-compatible queue; on a .fifo queue grouped by resource and deduplicated on the webhook-id). It never changes."`
	Settings             *endpoints.TargetSettings    `json:"settings,omitempty" doc:"A rabbitmq, kafka or sqs target's settings (required for those kinds; absent for http)."`
	Credentials          *endpoints.TargetCredentials `json:"credentials,omitempty" doc:"The user and password a rabbitmq or kafka target is authenticated with, for sqs the access key id and secret access key (required): sealed, never shown again."`
}

// target is the body's kind, settings and credentials as the store takes
// them.
func (b NewEndpointBody) target() (endpoints.Kind, endpoints.TargetSettings, *endpoints.TargetCredentials) {
	var set endpoints.TargetSettings
	if b.Settings != nil {
		set = *b.Settings
	}
	return b.Kind, set, b.Credentials
}

// EndpointPatchBody changes an endpoint: absent fields stay as they are.
type EndpointPatchBody struct {
	URL                  *string                      `json:"url,omitempty" maxLength:"2048" pattern:"^(https?|amqps?|kafka)://([A-Za-z0-9._~-]+|\\[[0-9A-Fa-f:.]+\\])(:[0-9]{1,5})?([/?][^\\s#\\x00-\\x1F\\x7F-\\x9F]*)?$" patternDescription:"an absolute http(s), amqp(s) or kafka URL without user info or fragment" doc:"A new URL (the rules of the create)."`
	Description          *string                      `json:"description,omitempty" minLength:"0" maxLength:"500" doc:"A new description; empty clears it."`
	Filters              []EndpointFilter             `json:"filters,omitempty" nullable:"false" minItems:"1" maxItems:"64" doc:"Replace the filters."`
	Ordered              *bool                        `json:"ordered,omitempty"`
	Rate                 *int                         `json:"rate_per_second,omitempty" minimum:"0" doc:"A new rate; 0: back to the deployment's default."`
	Concurrency          *int                         `json:"concurrency,omitempty" minimum:"0" doc:"A new concurrency; 0: back to the deployment's default."`
	Headers              EndpointHeaders              `json:"headers,omitempty" doc:"Replace every static header; {} clears them."`
	Expression           *string                      `json:"expression,omitempty" minLength:"0" maxLength:"2048" pattern:"^[^\\x00-\\x08\\x0B\\x0C\\x0E-\\x1F\\x7F-\\x9F]*$" patternDescription:"text without NUL or control characters but tab and line breaks" doc:"Replace the filter expression (the rules of the create); empty removes it."`
	Transformation       *string                      `json:"transformation,omitempty" minLength:"0" maxLength:"4096" pattern:"^[^\\x00-\\x08\\x0B\\x0C\\x0E-\\x1F\\x7F-\\x9F]*$" patternDescription:"text without NUL or control characters but tab and line breaks" doc:"Replace the transformation (the rules of the create: checked, then tried); empty removes it. A change of it or of the expression is the rules' next version."`
	TransformationSample map[string]any               `json:"transformation_sample,omitempty" doc:"An event body to try the new transformation on (as in the create)."`
	Settings             *endpoints.TargetSettings    `json:"settings,omitempty" doc:"Replace a rabbitmq or kafka target's settings."`
	Credentials          *endpoints.TargetCredentials `json:"credentials,omitempty" doc:"Replace a rabbitmq or kafka target's credentials (sealed, never shown again)."`
}

func (b EndpointPatchBody) patch() endpoints.Patch {
	p := endpoints.Patch{URL: b.URL, Description: b.Description, Filters: filters(b.Filters), Expression: b.Expression, Ordered: b.Ordered,
		Rate: b.Rate, Concurrency: b.Concurrency, Settings: b.Settings, Credentials: b.Credentials,
		Transformation: b.Transformation, TransformationSample: sample(b.TransformationSample)}
	if b.Headers != nil {
		h := map[string]string(b.Headers)
		p.Headers = &h
	}
	return p
}

// sample is a transformation's sample as the store takes it: its JSON
// (nil: none).
func sample(m map[string]any) []byte {
	if m == nil {
		return nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil // decoded from JSON: it encodes
	}
	return b
}

// EndpointDetail is an endpoint with its figures.
type EndpointDetail struct {
	endpoints.Endpoint
	Figures endpoints.Stats `json:"figures" doc:"Counted from the endpoint's deliveries, each figure bounded (see window and pending_at_least)."`
}

// EndpointCreated is a create's answer: the endpoint and its signing
// secret, shown this once.
type EndpointCreated struct {
	endpoints.Endpoint
	Secret string `json:"secret" doc:"The signing secret (whsec_..., Standard Webhooks): shown this once, only its sealed form is kept."`
}

type endpointRouter struct {
	a        *API
	s        *endpoints.Store
	tester   EndpointTester
	examples TestExamples
}

// as is the store acting for the call's token.
func (r endpointRouter) as(c Call) endpoints.Store { return r.s.As(c.Actor) }

func (r endpointRouter) create() {
	type createIn struct {
		TenantPath
		Body NewEndpointBody
	}
	create := op("create-endpoint", http.MethodPost, "/tenants/{tenant_id}/endpoints",
		"Create an endpoint receiving the tenant's matching events; its signing secret is shown once", "endpoints")
	create.DefaultStatus = http.StatusCreated
	Handle(r.a, Route{Op: create, Scope: ScopeTenant, Resource: "endpoint", Action: "endpoint.create", ShownOnce: true},
		func(ctx context.Context, c Call, in *createIn) (*created[EndpointCreated], error) {
			b := in.Body
			n := endpoints.New{TenantID: in.TenantID, URL: b.URL, Description: b.Description, Filters: filters(b.Filters), Expression: b.Expression,
				Unordered: b.Ordered != nil && !*b.Ordered, Rate: b.Rate, Concurrency: b.Concurrency, Headers: b.Headers,
				Transformation: b.Transformation, TransformationSample: sample(b.TransformationSample)}
			n.Kind, n.Settings, n.Credentials = b.target()
			e, secret, err := r.as(c).CreateEndpoint(ctx, n)
			if err != nil {
				return nil, err
			}
			return made(EndpointCreated{Endpoint: e, Secret: secret}, "/endpoints/"+e.ID), nil
		})
}

func (r endpointRouter) read() {
	type listIn struct {
		TenantPath
		PageQuery
		Enabled string `query:"enabled" enum:"true,false" doc:"Only enabled (true) or disabled (false) endpoints."`
	}
	Handle(r.a, Route{Op: op("list-endpoints", http.MethodGet, "/tenants/{tenant_id}/endpoints", "The tenant's endpoints (never their secrets)", "endpoints"),
		Scope: ScopeTenant},
		func(ctx context.Context, c Call, in *listIn) (*listOut[endpoints.Endpoint], error) {
			f := endpoints.Filter{TenantID: in.TenantID}
			if in.Enabled != "" {
				enabled := in.Enabled == "true"
				f.Enabled = &enabled
			}
			items, next, err := r.s.ListEndpoints(ctx, f, endpoints.Page{After: in.Cursor, Limit: in.Limit})
			return list(items, next), err
		})
	Handle(r.a, Route{Op: op("get-endpoint", http.MethodGet, "/endpoints/{endpoint_id}",
		"An endpoint with its figures: delivered, pending, dead, oldest undelivered age, last error (never its secrets nor header values)", "endpoints"),
		Scope: ScopeTenant},
		func(ctx context.Context, c Call, in *EndpointPath) (*body[EndpointDetail], error) {
			e, err := r.s.GetEndpoint(ctx, in.EndpointID)
			if err != nil {
				return nil, err
			}
			st, err := r.s.Stats(ctx, in.EndpointID)
			return reply(EndpointDetail{Endpoint: e, Figures: st}), err
		})
}

func (r endpointRouter) change() {
	type patchIn struct {
		EndpointPath
		Body EndpointPatchBody
	}
	Handle(r.a, Route{Op: op("update-endpoint", http.MethodPatch, "/endpoints/{endpoint_id}",
		"Change an endpoint (absent fields stay); the deliverer sees it within 5 s", "endpoints"),
		Scope: ScopeTenant, Resource: "endpoint", Action: "endpoint.update"},
		func(ctx context.Context, c Call, in *patchIn) (*body[endpoints.Endpoint], error) {
			e, err := r.as(c).UpdateEndpoint(ctx, in.EndpointID, in.Body.patch())
			return reply(e), err
		})
	for _, ch := range []struct {
		id, verb, summary string
		do                func(endpoints.Store, context.Context, string) (endpoints.Endpoint, error)
	}{
		{"disable-endpoint", "disable", "Stop deliveries to an endpoint (they wait, pending, until it is enabled)", endpoints.Store.DisableEndpoint},
		{"enable-endpoint", "enable", "Deliver to an endpoint again, whatever disabled it (operator, gone, failing)", endpoints.Store.EnableEndpoint},
		{"pause-endpoint", "pause", "Stop sending to an endpoint while its deliveries keep being written (the deliverer sees it within 5 s)", endpoints.Store.PauseEndpoint},
		{"resume-endpoint", "resume", "Send a paused endpoint what waited, in order, and what comes after", endpoints.Store.ResumeEndpoint},
	} {
		Handle(r.a, Route{Op: op(ch.id, http.MethodPost, "/endpoints/{endpoint_id}/"+ch.verb, ch.summary, "endpoints"),
			Scope: ScopeTenant, Resource: "endpoint", Action: "endpoint." + ch.verb},
			func(ctx context.Context, c Call, in *EndpointPath) (*body[endpoints.Endpoint], error) {
				e, err := ch.do(r.as(c), ctx, in.EndpointID)
				return reply(e), err
			})
	}
	del := op("delete-endpoint", http.MethodDelete, "/endpoints/{endpoint_id}",
		"Delete an endpoint with its secrets, and every delivery to it and their attempts (disable it to keep them)", "endpoints")
	del.DefaultStatus = http.StatusNoContent
	Handle(r.a, Route{Op: del, Scope: ScopeTenant, Resource: "endpoint", Action: "endpoint.delete"},
		func(ctx context.Context, c Call, in *EndpointPath) (*struct{}, error) {
			return &struct{}{}, r.as(c).DeleteEndpoint(ctx, in.EndpointID)
		})
}

func (r endpointRouter) secrets() {
	type rotateIn struct {
		EndpointPath
		Body struct {
			OverlapSeconds *int64 `json:"overlap_seconds,omitempty" minimum:"0" maximum:"2592000" doc:"How long the current secrets keep signing beside the new one, in seconds (at most 30 days; 0: they stop at once); absent: 86400."`
		}
	}
	type rotated struct {
		Secret             string    `json:"secret" doc:"The new signing secret: shown this once."`
		OldSecretsExpireAt time.Time `json:"old_secrets_expire_at" doc:"Until then every request carries a signature by each secret."`
	}
	Handle(r.a, Route{Op: op("rotate-endpoint-secret", http.MethodPost, "/endpoints/{endpoint_id}/secret/rotate",
		"Give an endpoint a new signing secret (shown once); the current ones keep signing for the overlap", "endpoints"),
		Scope: ScopeTenant, Resource: "endpoint", Action: "endpoint.rotate_secret"},
		func(ctx context.Context, c Call, in *rotateIn) (*body[rotated], error) {
			overlap := endpoints.DefaultOverlap
			if in.Body.OverlapSeconds != nil {
				overlap = time.Duration(*in.Body.OverlapSeconds) * time.Second
			}
			var out rotated
			var err error
			out.Secret, out.OldSecretsExpireAt, err = r.as(c).RotateSecret(ctx, in.EndpointID, overlap)
			return reply(out), err
		})
	type testIn struct {
		EndpointPath
		Body *struct {
			EventType string `json:"event_type,omitempty" maxLength:"200" pattern:"^[A-Za-z0-9_-]+\\.[A-Za-z0-9._-]+$" patternDescription:"a kind and a type: stripe.invoice.paid" doc:"The type to send (kind.type, as filters name it: stripe.invoice.paid); its body is the tenant's last event of the type, masked, or a minimal example of its schema. A type the tenant never received and no schema declares: 404. Absent: the synthetic sluice.test."`
		}
	}
	// EndpointTest is the answer: the attempt, and what was sent.
	type EndpointTest struct {
		endpoints.Attempt
		testevent.Example
	}
	Handle(r.a, Route{Op: op("test-endpoint", http.MethodPost, "/endpoints/{endpoint_id}/test",
		"Send a signed test event to an endpoint now, a delivery of its own (stored nowhere, in no order or trail), and return the attempt and what was sent (503 where this process does not deliver)", "endpoints"),
		Scope: ScopeTenant, Resource: "endpoint", Action: "endpoint.test"},
		func(ctx context.Context, c Call, in *testIn) (*body[EndpointTest], error) {
			if r.tester == nil {
				return nil, refusal.New(refusal.Unavailable, "this process does not deliver to endpoints: ask the admin listener of a process that runs the deliverer")
			}
			tenant, err := r.s.TenantOf(ctx, in.EndpointID)
			if err != nil {
				return nil, err
			}
			out := EndpointTest{Example: testevent.Synthetic()}
			if in.Body != nil && in.Body.EventType != "" && in.Body.EventType != endpoints.SyntheticTestType {
				if r.examples == nil {
					return nil, refusal.New(refusal.Unavailable, "this process builds no test event of a chosen type")
				}
				if out.Example, err = r.examples.Build(ctx, tenant, in.Body.EventType); err != nil {
					return nil, err
				}
			}
			if out.Attempt, err = r.tester.TestEndpoint(ctx, in.EndpointID, out.Event()); err != nil {
				return nil, err
			}
			r.a.record(ctx, c, audit.Target{Action: "endpoint.test", Resource: "endpoint", ID: in.EndpointID, TenantID: tenant})
			return reply(out), nil
		})
}
