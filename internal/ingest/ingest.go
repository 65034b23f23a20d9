// Package ingest is the front door: it authenticates each webhook over its
// raw body with the source's scheme and active secrets, maps the verified
// source to its tenant (never the payload), limits each tenant after
// authentication, and stores the delivery in the inbox and the outbox in one
// transaction shared with other requests (group commit). POST /v1/events
// does the same for a tenant's own batches, authenticated by an API key.
//
// The invariant it keeps: a 2xx is sent only after the delivery's transaction
// committed. On any doubt the answer is 5xx and the provider retries; the
// unique event key makes the retry harmless. A refused request stores
// nothing. Limits live in this process (per instance) and fail closed.
//
// What a source's kind means (its signature scheme, how its events are
// read, its body limit) is its provider's: internal/provider is the
// contract, internal/provider/kinds/<kind> the shipped kinds, and
// Config.Providers the registry this service takes webhooks for.
//
// An authenticated event is then published on its resource's topic
// (accepted), quarantined when it fails its type's schema, or kept
// unpublished as unhandled when no handler and no schema knows its type.
// Such a type is published all the same, on the destinations topic only the
// fan-out to tenants' endpoints reads, when one of the tenant's enabled
// endpoints' filters takes it (endpoints.go; read every EndpointsRefresh):
// its inbox row is published and its outcome accepted. That event was
// checked for its signature, its body's shape bounds, JSON well-formedness,
// and the id and type its kind reads, as every event is, and for nothing
// else: there is no schema to validate it by.
//
// An event whose resource is named only through another object (a Stripe
// refund from API version basil on names its payment, not its invoice) is
// resolved through links recorded by other events, or waits for one: see
// links.go.
package ingest

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/segmentio/encoding/json"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	metricnoop "go.opentelemetry.io/otel/metric/noop"

	"github.com/sluicehq/sluice/internal/envelope"
	"github.com/sluicehq/sluice/internal/keyring"
	"github.com/sluicehq/sluice/internal/provider"
	"github.com/sluicehq/sluice/internal/provider/kinds"
	"github.com/sluicehq/sluice/internal/provider/signature"
	"github.com/sluicehq/sluice/internal/store/catalog"
	"github.com/sluicehq/sluice/internal/store/inbox"
	"github.com/sluicehq/sluice/internal/telemetry"
	"github.com/sluicehq/sluice/schemas"
)

// Config tunes the ingest API.
type Config struct {
	// MaxBodyBytes caps a webhook body unless the source sets its own limit;
	// larger requests get 413 before the rest is read. Default 1 MiB
	// (GitHub sources: 25 MiB, GitHub's own cap).
	MaxBodyBytes int64
	// Tolerance is how far a signed timestamp may be from now, both ways,
	// unless the source sets its own. Default 5m.
	Tolerance time.Duration
	// SourceCacheTTL is how long a source (its secrets, settings) and an API
	// key are cached; a disabled source, a rotated secret or a revoked key
	// takes effect within it. Default 5s.
	SourceCacheTTL time.Duration
	// EndpointsRefresh is how long the enabled endpoints' filters are kept:
	// they decide whether an event no handler and no schema knows is
	// published for them, so an endpoint created, changed or disabled
	// decides within it. Default SourceCacheTTL (5s), as the fan-out's.
	EndpointsRefresh time.Duration
	// TenantRate and TenantBurst are each tenant's token bucket, in events
	// per second, after authentication; beyond it the answer is 429 with
	// Retry-After. Per instance: N instances admit up to N times the rate.
	// Defaults 1000/s and 2000. A tenant's own row in tenant_limits
	// (tenancy.Store.SetLimits) overrides both; it is read with the source,
	// so a change applies within SourceCacheTTL.
	TenantRate  float64
	TenantBurst int
	// AuthFailureRate and AuthFailureBurst bound failed authentications per
	// source: beyond them a failure is answered 429 instead of 401 (a valid
	// signature still passes, so an attacker knowing the URL cannot lock the
	// provider out). Defaults 10/s and 50.
	AuthFailureRate  float64
	AuthFailureBurst int
	// TrustedProxies are the networks whose X-Forwarded-For is believed when
	// checking a source's IP allowlist. Empty (the default): the peer
	// address is the client, whatever the header says.
	TrustedProxies []netip.Prefix
	// MaxBatchBodyBytes caps a POST /v1/events body. Default 8 MiB.
	MaxBatchBodyBytes int64
	// Shape bounds the structure of an authenticated JSON body.
	Shape Shape
	// Unverified bounds the bytes of bodies not yet authenticated.
	Unverified Unverified
	// Topics names the topics events are published to.
	Topics envelope.Topics
	// Providers are the kinds whose webhooks are taken; a source of a kind
	// it does not hold is answered as unknown. Default: the shipped kinds
	// (kinds.Builtin).
	Providers *provider.Registry
	// TenantTypes is the catalogue of tenants' own event types, consulted
	// after the built-in types (a tenant's never shadows one), each
	// tenant's list kept for SourceCacheTTL. Default: one over the
	// service's pool with catalog's defaults.
	TenantTypes *catalog.Store
	Commit      CommitConfig
	// TenantMetrics adds sluice_ingest_tenant_requests_total, requests by
	// tenant, kind and status code: a series per tenant and code it saw,
	// so off by default (see README, What to watch, for its cost).
	TenantMetrics bool
	// Tracing, when enabled, gives each request a server span (Middleware)
	// and each group commit a span; the outbox row then carries the
	// request span's context, so the relay and the consumers continue its
	// trace. Off (the zero value), the row carries the caller's
	// traceparent as it came, or a new one.
	Tracing telemetry.Tracing
}

// WithDefaults fills unset fields.
func (c Config) WithDefaults() Config {
	if c.MaxBodyBytes <= 0 {
		c.MaxBodyBytes = 1 << 20
	}
	if c.Tolerance <= 0 {
		c.Tolerance = signature.DefaultTolerance
	}
	if c.SourceCacheTTL <= 0 {
		c.SourceCacheTTL = 5 * time.Second
	}
	if c.EndpointsRefresh <= 0 {
		c.EndpointsRefresh = c.SourceCacheTTL
	}
	if c.TenantRate <= 0 {
		c.TenantRate = 1000
	}
	if c.TenantBurst <= 0 {
		c.TenantBurst = int(max(2*c.TenantRate, 1))
	}
	if c.AuthFailureRate <= 0 {
		c.AuthFailureRate = 10
	}
	if c.AuthFailureBurst <= 0 {
		c.AuthFailureBurst = 50
	}
	if c.MaxBatchBodyBytes <= 0 {
		c.MaxBatchBodyBytes = 8 << 20
	}
	if c.Providers == nil {
		c.Providers = kinds.Builtin()
	}
	c.Shape = c.Shape.withDefaults()
	c.Unverified = c.Unverified.withDefaults()
	c.Commit = c.Commit.WithDefaults()
	return c
}

// Service handles webhook deliveries and first-party event batches.
type Service struct {
	cfg         Config
	log         *slog.Logger
	sources     *sources
	apiKeys     *apiKeys
	catalogue   *schemas.Catalogue
	tenantTypes *tenantTypes
	// subscriptions are the enabled endpoints' filters, asked about types
	// no handler and no schema knows.
	subscriptions *subscriptions
	committer     *committer
	metrics       *metrics
	tenantLimit   *limiters
	failureLimit  *limiters
	unverified    *byteBudget
}

// New builds the service; Run must be running while it handles requests.
func New(cfg Config, log *slog.Logger, pool *pgxpool.Pool, ring *keyring.Ring, catalogue *schemas.Catalogue, reg prometheus.Registerer) *Service {
	cfg = cfg.WithDefaults()
	m := newMetrics(reg, cfg.TenantMetrics)
	unverified := newByteBudget(cfg.Unverified)
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "sluice_ingest_unverified_bytes",
		Help: "Bytes held by request bodies whose signature is not checked yet (bounded by --unverified-mib).",
	}, func() float64 { return float64(unverified.held()) }))
	types := cfg.TenantTypes
	if types == nil {
		// Defaults always build: the built-in schemas are loaded already
		// and the default vocabulary's names are valid.
		types, _ = catalog.New(pool, catalog.Config{Builtin: catalogue, Topics: cfg.Topics, Providers: cfg.Providers})
	}
	return &Service{
		cfg:           cfg,
		tenantTypes:   newTenantTypes(types, cfg.SourceCacheTTL),
		subscriptions: newSubscriptions(pool, cfg.EndpointsRefresh),
		log:           log,
		sources:       newSources(pool, ring, cfg.Providers, cfg.SourceCacheTTL, sourceDefaults{Tolerance: cfg.Tolerance, MaxBodyBytes: cfg.MaxBodyBytes}),
		apiKeys:       newAPIKeys(pool, cfg.SourceCacheTTL),
		catalogue:     catalogue,
		committer:     newCommitter(pool, log, cfg.Commit, m, cfg.Tracing.Tracer(tracerName)),
		metrics:       m,
		tenantLimit:   newLimiters(cfg.TenantRate, cfg.TenantBurst),
		failureLimit:  newLimiters(cfg.AuthFailureRate, cfg.AuthFailureBurst),
		unverified:    unverified,
	}
}

// Run commits the deliveries requests hand in (group commit) until ctx
// ends, then commits whatever is still queued and returns nil: a delivery
// taken into the queue is never dropped, and one handed in after ctx ended
// is answered 503. Requests wait on these commits, so a process draining
// on SIGTERM ends ctx only once its HTTP server stopped accepting and
// answered the requests in flight. Call it once.
func (s *Service) Run(ctx context.Context) error {
	s.committer.start()
	<-ctx.Done()
	s.committer.stop()
	return nil
}

// tracerName is the instrumentation scope of ingest's spans.
const tracerName = "github.com/sluicehq/sluice/internal/ingest"

// Middleware is the HTTP middleware that gives each ingest request its
// server span (otelhttp: the caller's trace context is continued), or nil
// when tracing is off. It wraps the whole listener, so the span covers
// routing and the answer, and leaves other paths (health) alone.
func (s *Service) Middleware() func(http.Handler) http.Handler {
	t := s.cfg.Tracing
	if !t.Enabled() {
		return nil
	}
	return otelhttp.NewMiddleware("ingest",
		otelhttp.WithTracerProvider(t.Provider),
		otelhttp.WithPropagators(t.Propagation()),
		otelhttp.WithMeterProvider(metricnoop.NewMeterProvider()), // Prometheus counts requests already
		otelhttp.WithFilter(func(r *http.Request) bool { return route(r.URL.Path) != "" }),
		otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string { return r.Method + " " + route(r.URL.Path) }),
	)
}

// route is the route template of an ingest path, "" for other paths: span
// names must not hold ids.
func route(path string) string {
	switch {
	case strings.HasPrefix(path, "/v1/ingest/"):
		return "/v1/ingest/{source_id}"
	case path == "/v1/events":
		return "/v1/events"
	}
	return ""
}

// Register adds the ingest routes.
func (s *Service) Register(r gin.IRouter) {
	r.POST("/v1/ingest/:source_id", s.handleWebhook)
	r.POST("/v1/events", s.handleEvents)
}

// rejection is a request refused before anything was stored.
type rejection struct {
	status int
	reason string // metric label and log attribute
	msg    string // what the caller is told
}

// retryAfter, when set, is sent as Retry-After (429 and 503).
func (s *Service) reject(c *gin.Context, r rejection, retryAfter time.Duration, attrs ...slog.Attr) {
	c.Set(outcomeKey, r.reason)
	level := slog.LevelInfo
	if r.status == http.StatusTooManyRequests {
		// Counted in metrics; one line per refused request of a flood
		// would drown the log.
		level = slog.LevelDebug
	}
	s.log.LogAttrs(c.Request.Context(), level, "request rejected",
		append([]slog.Attr{slog.String("reason", r.reason), slog.Int("status", r.status), slog.String("path", c.FullPath()), slog.String("source_id", c.Param("source_id"))}, attrs...)...)
	if r.status == http.StatusServiceUnavailable && retryAfter <= 0 {
		retryAfter = time.Second
	}
	if retryAfter > 0 {
		c.Header("Retry-After", retryAfterSeconds(retryAfter))
	}
	c.AbortWithStatusJSON(r.status, gin.H{"error": r.msg})
}

var (
	rejectUnknownSource = rejection{http.StatusNotFound, "unknown_source", "unknown source"}
	rejectMediaType     = rejection{http.StatusUnsupportedMediaType, "unsupported_media_type", "content type must be application/json"}
	rejectRateLimited   = rejection{http.StatusTooManyRequests, "rate_limited", "tenant rate limit exceeded, retry later"}
	rejectOverloaded    = rejection{http.StatusServiceUnavailable, "overloaded", "not stored, retry later"}
	rejectNotCommitted  = rejection{http.StatusServiceUnavailable, "not_committed", "not stored, retry later"}
)

func (s *Service) handleWebhook(c *gin.Context) {
	start := time.Now()
	defer s.metrics.observe(c, start)
	if c.Request.ContentLength < 0 {
		// A body of unknown length came chunked, perhaps with a
		// Content-Length beside it that net/http dropped without a trace
		// (request smuggling through a proxy that framed it by that length):
		// whatever follows on this connection is not read (RFC 9112 6.3).
		c.Header("Connection", "close")
	}
	src, ok := s.webhookSource(c)
	if !ok {
		return
	}
	c.Set(kindKey, string(src.Kind))
	c.Set(tenantKey, src.TenantID)
	tenant := slog.String("tenant_id", src.TenantID)
	if wait, ok := s.tenantLimit.peek(src.TenantID, src.Limits, time.Now()); !ok {
		s.reject(c, rejectRateLimited, wait, tenant)
		return
	}
	body, ok := s.authenticate(c, src, tenant)
	if !ok {
		return
	}

	// Authenticated from here on.
	if err := s.cfg.Shape.check(body); err != nil {
		s.reject(c, rejection{http.StatusBadRequest, "too_complex", err.Error()}, 0, tenant)
		return
	}
	pe, err := readEvent(src, c.Request.Header, body, s.catalogueOf(c.Request.Context(), src.TenantID))
	if errors.Is(err, errCatalogue) {
		s.reject(c, rejection{http.StatusServiceUnavailable, "catalogue_unavailable", "temporarily unavailable"}, 0, tenant, slog.Any("error", err))
		return
	}
	if err != nil {
		s.reject(c, rejection{http.StatusBadRequest, "malformed_body", err.Error()}, 0, tenant)
		return
	}
	if wait, ok := s.tenantLimit.takeWith(src.TenantID, 1, time.Now(), src.Limits); !ok {
		s.reject(c, rejectRateLimited, wait, tenant, slog.String("event_id", pe.ID))
		return
	}
	d := s.delivery(src, pe, body, traceParent(c.Request), start)
	if s.gone(c) {
		return
	}
	s.store(c, d, start, tenant)
}

// webhookSource finds the source a delivery is addressed to; when there is
// none that takes webhooks, the request is answered.
func (s *Service) webhookSource(c *gin.Context) (*source, bool) {
	ctx := c.Request.Context()
	sourceID := c.Param("source_id")
	if !canonicalUUID(sourceID) {
		// Another spelling of a real id would cost a query and a decrypt
		// before failing; only the canonical form names a source.
		s.reject(c, rejectUnknownSource, 0)
		return nil, false
	}
	src, err := s.sources.get(ctx, sourceID)
	switch {
	case errors.Is(err, errUnknownSource), err == nil && src.Scheme.Verifier == nil:
		s.reject(c, rejectUnknownSource, 0)
		return nil, false
	case err != nil:
		if errors.Is(err, errSealed) {
			s.log.ErrorContext(ctx, "source secret unreadable: check SLUICE_SECRET_KEY", slog.String("source_id", sourceID), slog.Any("error", err))
		}
		s.reject(c, rejection{http.StatusServiceUnavailable, "source_lookup_failed", "temporarily unavailable"}, 0, slog.Any("error", err))
		return nil, false
	}
	return src, true
}

// authenticate reads the body within the source's limits and the budget of
// unverified bytes, and verifies it with the source's scheme; when it
// cannot, the request is answered.
func (s *Service) authenticate(c *gin.Context, src *source, tenant slog.Attr) ([]byte, bool) {
	if ip := clientIP(c.Request, s.cfg.TrustedProxies); !src.allows(ip) {
		s.reject(c, rejection{http.StatusForbidden, "ip_not_allowed", "address not allowed for this source"}, 0, tenant, slog.String("client_ip", ip.String()))
		return nil, false
	}
	if !isJSON(c.GetHeader("Content-Type")) {
		s.reject(c, rejectMediaType, 0, tenant)
		return nil, false
	}
	unverified := &hold{budget: s.unverified, key: src.ID}
	defer unverified.release()
	body, ok := s.readBody(c, src.MaxBody, unverified)
	if !ok || s.gone(c) {
		return nil, false
	}
	_, err := src.Scheme.Verify(signature.Delivery{Header: c.Request.Header, Body: body, Now: time.Now()}, src.Secrets)
	unverified.release()
	if err == nil {
		return body, true
	}
	if wait, ok := s.failureLimit.take(src.ID, 1, time.Now()); !ok {
		s.reject(c, rejection{http.StatusTooManyRequests, "auth_rate_limited", "too many failed authentications"}, wait, tenant)
		return nil, false
	}
	reason := "bad_signature"
	if errors.Is(err, signature.ErrStale) {
		reason = "stale_timestamp"
	}
	s.reject(c, rejection{http.StatusUnauthorized, reason, "invalid signature"}, 0, tenant, slog.Any("error", err))
	return nil, false
}

// store commits one delivery and answers: 2xx only once it is committed.
func (s *Service) store(c *gin.Context, d *delivery, start time.Time, tenant slog.Attr) {
	ctx := c.Request.Context()
	res := s.committer.submit(ctx, d)
	attrs := func(more ...slog.Attr) []slog.Attr {
		return append([]slog.Attr{tenant, slog.String("source_id", d.SourceID), slog.String("event_id", d.EventID), slog.String("event_type", d.EventType)}, more...)
	}
	if res.err != nil {
		r := rejectNotCommitted
		if errors.Is(res.err, ErrOverloaded) {
			r = rejectOverloaded
		}
		s.reject(c, r, 0, attrs(slog.Any("error", res.err))...)
		return
	}
	c.Set(outcomeKey, string(res.outcome))
	// Built only when logged: this runs for every accepted event.
	if s.log.Enabled(ctx, slog.LevelDebug) {
		s.log.LogAttrs(ctx, slog.LevelDebug, "webhook stored", attrs(slog.String("outcome", string(res.outcome)), slog.Int64("inbox_id", res.inboxID))...)
	}
	writeOutcome(c, res.outcome, d.EventID)
}

// writeOutcome answers {"event_id":...,"outcome":...}, the bytes c.JSON
// would write for a gin.H of the two, appended without a map or reflection.
func writeOutcome(c *gin.Context, o Outcome, eventID string) {
	buf := make([]byte, 0, 48+len(eventID))
	buf = append(buf, `{"event_id":`...)
	buf = json.AppendEscape(buf, eventID, json.EscapeHTML)
	buf = append(buf, `,"outcome":`...)
	buf = json.AppendEscape(buf, string(o), json.EscapeHTML)
	c.Data(o.status(), "application/json; charset=utf-8", append(buf, '}'))
}

// gone reports, and counts, a request whose client went away: nothing more
// is spent on it, and nothing was stored for it.
func (s *Service) gone(c *gin.Context) bool {
	if c.Request.Context().Err() == nil {
		return false
	}
	c.Set(outcomeKey, "client_gone")
	c.Abort()
	return true
}

// traceParent is the trace context stored with a delivery's outbox row,
// which the relay and the consumers continue: the request's server span
// when tracing is on, otherwise the caller's traceparent as it came ("" when
// it has none or a malformed one: delivery then starts a trace).
func traceParent(r *http.Request) string {
	if tp := envelope.TraceParentOf(r.Context()); tp != "" {
		return tp
	}
	return validTrace(r.Header.Get("traceparent"))
}

// canonicalUUID accepts only the lowercase, hyphenated form a source id is
// handed out in: what uuid.Parse accepts and String gives back unchanged,
// checked in place (String allocated for every request).
func canonicalUUID(id string) bool {
	if len(id) != 36 {
		return false
	}
	for i := range len(id) {
		switch c := id[i]; {
		case i == 8 || i == 13 || i == 18 || i == 23:
			if c != '-' {
				return false
			}
		case '0' <= c && c <= '9', 'a' <= c && c <= 'f':
		default:
			return false
		}
	}
	return true
}

// delivery decides where an authenticated event goes: published on its
// resource topic, kept as unhandled, or quarantined with the reason. An
// event no handler and no schema knows is published on the destinations
// topic instead when one of its tenant's endpoints takes it
// (Subscribed).
func (s *Service) delivery(src *source, pe providerEvent, body []byte, trace string, received time.Time) *delivery {
	d := &delivery{
		TenantID:   src.TenantID,
		SourceID:   src.ID,
		Account:    src.Account,
		EventID:    pe.ID,
		EventType:  pe.Type,
		ObjectType: pe.ObjectType,
		ObjectID:   pe.ObjectID,
		Status:     inbox.StatusUnhandled,
		Body:       body,
		Sum:        contentSum(src.Scheme, pe.doc, body),
		ReceivedAt: received,
	}
	if !pe.Time.IsZero() {
		d.EventTime = &pe.Time
	}
	if pe.doc != nil {
		d.JSONSum = jsonSum(pe.doc)
	} else {
		d.JSONSum = bodyJSONSum(body)
	}
	entry := pe.Entry
	switch {
	case entry == nil && pe.Problem != "": // a tenant's type that cannot publish here
		d.Status, d.Reason = inbox.StatusQuarantined, storableText(pe.Problem)
		return d
	case entry == nil && pe.Subscribed:
		s.forEndpoints(d, src, pe, trace)
		return d
	case entry == nil:
		return d
	}
	validate := func() error { return entry.Validate(body) }
	if pe.doc != nil { // parsed already by readEvent or readBatchEvent
		validate = func() error { return entry.ValidateDoc(pe.doc) }
	}
	if err := validate(); err != nil {
		d.Status, d.Reason = inbox.StatusQuarantined, storableText(err.Error())
		return d
	}
	if pe.Problem != "" {
		d.Status, d.Reason = inbox.StatusQuarantined, pe.Problem
		return d
	}
	d.Status, d.ObjectType, d.VersionID = inbox.StatusPublished, entry.ObjectType, entry.VersionID
	topic := s.cfg.Topics.Resource(entry.Topic)
	linkDelivery(d, entry, pe, topic)
	var key string
	if d.Wait == nil { // a waiting event gets its key once its object is known
		key = envelope.Key(src.TenantID, entry.ObjectType, pe.ObjectID)
	}
	d.Envelope = eventEnvelope(src, pe, key, trace, entry.DataSchema)
	if d.Wait == nil {
		d.Topic, d.Key = &topic, []byte(key)
	}
	if len(body) <= envelope.MaxInlineBody {
		d.Payload = body
	}
	return d
}

// forEndpoints publishes an event no handler and no schema knows on the
// destinations topic, which only the fan-out reads: it was authenticated,
// its body's shape bounded and its JSON parsed, its id and type read by its
// kind, and nothing else (there is no schema to validate it by). It is keyed
// by its object when its kind names one (Stripe's data.object), so a
// resource's events keep their order; by its own id otherwise (no order
// among them to keep).
func (s *Service) forEndpoints(d *delivery, src *source, pe providerEvent, trace string) {
	key := envelope.Key(src.TenantID, cmp.Or(pe.ObjectType, string(src.Kind)), pe.ObjectID)
	if pe.ObjectID == "" {
		key = envelope.Key(src.TenantID, "event", pe.ID)
	}
	topic := s.cfg.Topics.Destinations()
	d.Status = inbox.StatusPublished
	d.Envelope = eventEnvelope(src, pe, key, trace, "")
	d.Topic, d.Key = &topic, []byte(key)
	if len(d.Body) <= envelope.MaxInlineBody {
		d.Payload = d.Body
	}
}

// eventEnvelope is the record headers of an event of src published under
// key ("" while it waits for its object), continuing trace (a new one when
// it is "").
func eventEnvelope(src *source, pe providerEvent, key, trace, dataSchema string) envelope.Event {
	if trace == "" {
		trace = envelope.NewTraceParent()
	}
	return envelope.Event{
		ID:            pe.ID,
		Source:        envelope.SourceURI(src.TenantID, src.ID),
		Type:          string(src.Kind) + "." + pe.Type,
		Subject:       pe.ObjectID,
		Time:          pe.Time,
		TenantID:      src.TenantID,
		SourceAccount: src.Account,
		PartitionKey:  key,
		ContentType:   "application/json",
		TraceParent:   trace,
		APIVersion:    pe.APIVersion,
		DataSchema:    dataSchema,
	}
}
