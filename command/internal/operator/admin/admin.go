// Package admin is the operators' HTTP API, served under /admin/v1 on the
// admin listener (internal/listen.NewAdmin), never on the public webhook
// port.
// Its OpenAPI 3.1 document, at /admin/v1/openapi.json, is generated from the
// Go operations themselves (huma), so it cannot drift from what is served.
// Errors are RFC 9457 problem details (application/problem+json).
//
// Every request under /admin/v1 but the document itself carries a bearer
// token (internal/operator/admintoken). The invariants this package keeps:
//   - a read token only reads (GET); an operate token also acts;
//   - a tenant-scoped token sees and acts on its own tenant only: another
//     tenant's ids are 404, exactly as ids that do not exist, and routes
//     spanning tenants are 403;
//   - every route declares its scope decision (Handle takes a Route with a
//     Scope); a route that does not cannot be registered, and
//     TestEveryRouteKeepsTenantScope walks the served routes to prove it;
//   - every operate action and every payload read is audited (internal/audit).
//   - what a request carries is judged at the edge before any store sees it
//     (edge.go, by the rules of internal/operator/input, stated in the
//     document): text without NUL or control characters and of bounded
//     length, canonical uuids, ids of at least 1, bounded numbers; a
//     malformed id is 422 on every route, a well-formed unknown one 404;
//   - a refusal never repeats a body's value (it may be a secret).
//
// The conventions every answer keeps (requests.go, idempotency.go): a
// create answers 201 with Location; every answer carries X-Request-Id (a
// well-formed one the request brought, or a new one), repeated in a
// problem's request_id and in the request's log line, and Cache-Control:
// no-store; every create honours Idempotency-Key, per token, for a day.
//
// # Adding a resource group
//
// Write a function func(a *API) that registers its operations with Handle,
// each with its Route (Scope, Action, Resource, and Payload for routes
// that return an event's body), and pass it in Config.Groups. For every
// path parameter naming something owned by a tenant, register an owner
// resolver with a.Owner(param, resource, func(ctx, id) (tenantID, error)) so a
// scoped token asking for another tenant's id is answered 404 before the
// handler runs; a parameter that names something only inside another's
// owner (an event type's kind and name inside tenant_id) is registered with
// a.Within(param, parent) instead. A tenant-scoped route whose path names a
// parameter with no owner refuses every scoped token (500), and the route
// walk test fails.
// List routes filter with Call.TenantFilter, create routes check the
// tenant they are given with Call.Tenant. Operate handlers write their
// audit row in their own transaction (Call.Actor, audit.Actor.Record);
// refusals and payload reads are audited here.
//
// Reconciliation's routes are registered with tenancy's: where a source
// stands and its latest runs, the runs across sources, and a run started
// by request through Config.Reconciler.
//
// The groups this package ships besides those: OperateRoutes
// (internal/operator/operate: inbox search, trails, payloads, dead letters,
// conflicts, consumer groups, the slot, rewinds) and CatalogRoutes
// (internal/store/catalog: tenants' event types). The pipeline registers
// both on every admin listener.
package admin

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"reflect"
	"slices"

	"github.com/danielgtaylor/huma/v2"
	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluicehq/sluice/command/internal/operator/addrlimit"
	"github.com/sluicehq/sluice/command/internal/operator/admintoken"
	"github.com/sluicehq/sluice/internal/audit"
	"github.com/sluicehq/sluice/internal/ingest/reconcile"
	"github.com/sluicehq/sluice/internal/refusal"
	"github.com/sluicehq/sluice/internal/store/tenancy"
)

// Prefix is where the API lives on the admin listener.
const Prefix = "/admin/v1"

// OpenAPIPath is the served OpenAPI 3.1 document.
const OpenAPIPath = Prefix + "/openapi.json"

// Scope is a route's decision about tenants.
type Scope string

const (
	// ScopeTenant: the route reads or acts on one tenant's data. A scoped
	// token reaches its own tenant's only; any other tenant's id is 404.
	ScopeTenant Scope = "tenant"
	// ScopeGlobal: the route spans tenants (consumer groups, rewinds, slot
	// state, the list of tenants). A scoped token gets 403.
	ScopeGlobal Scope = "global"
)

// ScopeExtension is the OpenAPI extension carrying each operation's scope,
// so the document tells operators which token a route needs.
const ScopeExtension = "x-sluice-scope"

// Route is an operation and the decisions this package enforces for it.
type Route struct {
	Op    huma.Operation
	Scope Scope
	// Resource and Action name what the audit trail records (e.g. source,
	// source.disable); required for every route that acts or reads a
	// payload.
	Resource, Action string
	// Payload marks a GET that returns an event's body: audited like an
	// action.
	Payload bool
	// ShownOnce marks a create whose answer holds a secret shown once (an
	// API key, an admin token): sent again under its Idempotency-Key it is
	// answered 409 naming what it made, never the secret, which is never
	// kept.
	ShownOnce bool
}

// OwnerFunc finds the tenant an id of some resource belongs to, or returns
// a refusal of kind refusal.NotFound.
type OwnerFunc func(ctx context.Context, id string) (tenantID string, err error)

type owner struct {
	resource string
	find     OwnerFunc
	// within names the parameter whose owner confines this one (an event
	// type's name is only ever read inside the tenant of tenant_id).
	within string
}

// Config is what the API serves.
type Config struct {
	Pool  *pgxpool.Pool
	Store tenancy.Store // its Actor is set per request
	// Groups register further resource groups (see the package doc).
	Groups []func(*API)
	// Reconciler runs a source's reconciliation on request (POST
	// /sources/{source_id}/reconcile), bounded by its RunTimeout, which
	// should be ReconcileRunTimeout: the request waits for the run. Nil
	// where the process does not ingest: the route answers 503, and the
	// routes that read runs still answer.
	Reconciler *reconcile.Runner
	// FailedAuthRate and FailedAuthBurst bound failed authentications per
	// client address (an IPv6 one by its /64): a failure past them is
	// answered 429 instead of 401. A valid token is never refused and
	// spends nothing. Default 1/s, burst 10: a person who mistypes is never
	// stopped, a guesser gets 86,400 tries a day against a 256-bit space,
	// and a misbehaving script behind a shared bastion locks out no one.
	FailedAuthRate  float64
	FailedAuthBurst int
	// Metrics registers the API's counters (refused authentications);
	// nil: none.
	Metrics prometheus.Registerer
	// Portal is what minting portal links needs (portal_routes.go).
	Portal PortalConfig
}

// API is the admin API being registered on an engine.
type API struct {
	api    huma.API
	cfg    Config
	log    *slog.Logger
	tokens admintoken.Store
	owners map[string]owner
	fails  *addrlimit.Limiter
	keys   keys
	// refusals counts refused authentications by outcome: unauthenticated
	// (401) and limited (429).
	refusals *prometheus.CounterVec
}

// New registers the API on e (the admin listener's engine) under Prefix.
func New(e *gin.Engine, cfg Config, log *slog.Logger) *API {
	if cfg.FailedAuthRate <= 0 {
		cfg.FailedAuthRate = 1
	}
	if cfg.FailedAuthBurst <= 0 {
		cfg.FailedAuthBurst = 10
	}
	hc := huma.Config{
		OpenAPI: &huma.OpenAPI{
			OpenAPI: "3.1.0",
			Info: &huma.Info{Title: "Sluice admin API", Version: "1",
				Description: "Operators' API of Sluice. Bearer tokens from `sluice admintoken create`; errors are RFC 9457 problem details; lists page by cursor. " +
					"x-sluice-scope on each operation: `tenant` routes accept tenant-scoped tokens (confined to their tenant), `global` routes need an unscoped token."},
			Components: &huma.Components{
				Schemas: huma.NewMapRegistry("#/components/schemas/", huma.DefaultSchemaNamer),
				SecuritySchemes: map[string]*huma.SecurityScheme{
					"bearer": {Type: "http", Scheme: "bearer", Description: "An admin token (slk_adm_...)."},
				},
			},
			Security: []map[string][]string{{"bearer": {}}},
			Servers:  []*huma.Server{{URL: "/", Description: "The admin listener serving this document (SLUICE_ADMIN_ADDR, default 127.0.0.1:8082); the operations' paths start with " + Prefix + "."}},
		},
		Formats:       map[string]huma.Format{"application/json": jsonFormat, "json": jsonFormat},
		DefaultFormat: "application/json",
		Transformers:  []huma.Transformer{problems},
	}
	// Every error of the document is a Problem (problem.go).
	hc.Components.Schemas.RegisterTypeAlias(reflect.TypeFor[huma.ErrorModel](), reflect.TypeFor[Problem]())
	a := &API{
		api:    huma.NewAPI(hc, ginAdapter{e}),
		cfg:    cfg,
		log:    log.With(slog.String("component", "admin")),
		tokens: admintoken.Store{Pool: cfg.Pool},
		owners: map[string]owner{},
		fails:  addrlimit.New(cfg.FailedAuthRate, cfg.FailedAuthBurst),
		keys:   keys{pool: cfg.Pool},
		refusals: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "sluice_admin_auth_refusals_total",
			Help: "Admin API requests refused at authentication: unauthenticated (401: a missing, unknown, revoked or expired token), limited (429: past the address's failure budget)."},
			[]string{"outcome"}),
	}
	if cfg.Metrics != nil {
		cfg.Metrics.MustRegister(a.refusals)
	}
	e.Use(a.answerConventions)
	a.unrouted(e)
	a.serveDocuments(e)
	a.api.UseMiddleware(a.authenticate)
	tenancyRoutes(a)
	reconcileRoutes(a)
	tokenRoutes(a)
	portalRoutes(a)
	for _, g := range cfg.Groups {
		g(a)
	}
	a.stateVocabularies()
	a.statePagination()
	return a
}

// OpenAPI is the document the API serves.
func (a *API) OpenAPI() *huma.OpenAPI { return a.api.OpenAPI() }

// Owner registers how to find the tenant of the ids a path parameter
// names; resource is how a 404 calls them ("no source <id>").
func (a *API) Owner(param, resource string, fn OwnerFunc) {
	a.owners[param] = owner{resource: resource, find: fn}
}

// Within registers a path parameter that names something only inside
// another parameter's owner (an event type's kind and name inside
// tenant_id): a route with param is confined by parent, and one without
// parent refuses every scoped token.
func (a *API) Within(param, parent string) {
	a.owners[param] = owner{within: parent}
}

// Call is one authenticated request as a handler sees it.
type Call struct {
	Token admintoken.Token
	// Actor is who the audit trail names.
	Actor *audit.Actor
	// Store is the tenancy store acting as Actor.
	Store tenancy.Store
	// RequestID names the request in the log (X-Request-Id).
	RequestID string
}

// Tenant refuses (404, as for an unknown tenant) a tenant outside the
// token's scope.
func (c Call) Tenant(tenantID string) error {
	if c.Token.Scoped() && tenantID != c.Token.TenantID {
		return refusal.NoSuch("tenant", tenantID)
	}
	return nil
}

// TenantFilter is the tenant a list is confined to: the one asked for, or
// for a scoped token its own (another is 404).
func (c Call) TenantFilter(asked string) (string, error) {
	if !c.Token.Scoped() {
		return asked, nil
	}
	if asked == "" {
		return c.Token.TenantID, nil
	}
	return asked, c.Tenant(asked)
}

type callKey struct{}

// Handle registers one operation with its scope decision. The handler
// gets the request's Call; an error it returns is mapped to a problem
// detail (a refusal as the table of refusals.go says, anything else to
// 500 without its text).
func Handle[I, O any](a *API, r Route, h func(ctx context.Context, c Call, in *I) (*O, error)) {
	if r.Scope != ScopeTenant && r.Scope != ScopeGlobal {
		panic("admin: route " + r.Op.OperationID + " declares no scope")
	}
	if (r.Op.Method != http.MethodGet || r.Payload) && (r.Action == "" || r.Resource == "") {
		panic("admin: route " + r.Op.OperationID + " acts without naming its audit action and resource")
	}
	op := r.Op
	op.Path = Prefix + op.Path
	op.Extensions = map[string]any{ScopeExtension: string(r.Scope)}
	op.Metadata = map[string]any{"route": r}
	// Every answer an operation can give is in the document, so a client
	// (and the tests' validator) knows its shape: the refusals of
	// authenticate, problem's mappings, and 409 for what acts.
	op.Errors = append(op.Errors, http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound, http.StatusUnprocessableEntity,
		http.StatusTooManyRequests, http.StatusInternalServerError, http.StatusServiceUnavailable)
	if op.Method != http.MethodGet {
		op.Errors = append(op.Errors, http.StatusConflict)
	}
	if reflect.TypeFor[I]().Kind() == reflect.Struct {
		if _, ok := reflect.TypeFor[I]().FieldByName("Body"); ok {
			// A body that is no JSON (400), too large (413), of another
			// media type (415).
			op.Errors = append(op.Errors, http.StatusBadRequest, http.StatusRequestEntityTooLarge, http.StatusUnsupportedMediaType)
		}
	}
	slices.Sort(op.Errors)
	op.Errors = slices.Compact(op.Errors)
	if isCreate(r) {
		op.Parameters = append(op.Parameters, idempotencyParam())
	}
	huma.Register(a.api, op, func(ctx context.Context, in *I) (*O, error) {
		c, ok := ctx.Value(callKey{}).(Call)
		if !ok { // authenticate always sets it; refuse rather than run unscoped
			return nil, huma.Error500InternalServerError("request not authenticated")
		}
		out, err := h(ctx, c, in)
		if err != nil {
			return nil, a.problem(ctx, c, err)
		}
		return out, nil
	})
	registered := a.registered(op.Method, op.Path)
	a.stateInputRules(registered)
	stateRetryAfter(registered)
}

// stateRetryAfter documents Retry-After on the answers that carry it:
// 429 always, 503 when waiting helps (a look-up that failed, not a process
// that does not run what answers).
func stateRetryAfter(op *huma.Operation) {
	for _, status := range []string{"429", "503"} {
		resp := op.Responses[status]
		if resp == nil {
			continue
		}
		if resp.Headers == nil {
			resp.Headers = map[string]*huma.Param{}
		}
		resp.Headers["Retry-After"] = &huma.Param{Description: "Seconds to wait before sending the request again (429 always; 503 when waiting helps).",
			Schema: &huma.Schema{Type: huma.TypeInteger, Minimum: ptr(1.0)}}
	}
}

// registered is the operation the document holds for method and path.
func (a *API) registered(method, path string) *huma.Operation {
	item := a.api.OpenAPI().Paths[path]
	ops := map[string]*huma.Operation{http.MethodGet: item.Get, http.MethodPost: item.Post, http.MethodPut: item.Put,
		http.MethodDelete: item.Delete, http.MethodPatch: item.Patch}
	return ops[method]
}

// problem maps an operation's error to a problem detail. Only refusals
// (internal/refusal) carry their text to the caller: they are written for a
// person, and the table in refusals.go gives their status and type.
// Anything else (the database's own words, a network error) is logged and
// answered with a generic 500.
func (a *API) problem(ctx context.Context, c Call, err error) error {
	var se huma.StatusError
	if errors.As(err, &se) {
		return err
	}
	if r, ok := refusal.Of(err); ok {
		return refusalProblem(err, r)
	}
	if errors.Is(err, context.Canceled) {
		r := refusal.New(refusal.Unavailable, "request canceled")
		return refusalProblem(r, r)
	}
	a.log.ErrorContext(ctx, "admin operation failed", slog.Any("error", err), slog.String("request_id", c.RequestID))
	return huma.Error500InternalServerError("internal error; the process log has the details")
}
