// Package ingest is the front door: it authenticates each webhook over its
// raw body, maps the verified source to its tenant, and stores the delivery
// in the inbox and the outbox in one transaction shared with other requests
// (group commit).
//
// The invariant it keeps: a 2xx is sent only after the delivery's transaction
// committed. On any doubt the answer is 5xx and the provider retries; the
// unique event key makes the retry harmless.
package ingest

import (
	"crypto/sha256"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluicehq/sluice/ingest/signature"
	"github.com/sluicehq/sluice/internal/envelope"
	"github.com/sluicehq/sluice/internal/keyring"
	"github.com/sluicehq/sluice/schemas"
)

// Config tunes the ingest API.
type Config struct {
	// MaxBodyBytes caps a webhook body; larger requests get 413 before the
	// rest is read. Default 1 MiB.
	MaxBodyBytes int64
	// Tolerance is how far a signed timestamp may be from now. Default 5m.
	Tolerance time.Duration
	// SourceCacheTTL is how long a source (and its secrets) is cached; a
	// disabled source or a rotated secret takes effect within it. Default 5s.
	SourceCacheTTL time.Duration
	// Topics names the topics events are published to.
	Topics envelope.Topics
	Commit CommitConfig
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
	c.Commit = c.Commit.WithDefaults()
	return c
}

// Service handles webhook deliveries.
type Service struct {
	cfg       Config
	log       *slog.Logger
	sources   *sources
	catalogue *schemas.Catalogue
	committer *committer
	metrics   *metrics
	verifiers map[string]signature.Verifier
}

// New builds the service; Start must be called before it handles requests.
func New(cfg Config, log *slog.Logger, pool *pgxpool.Pool, ring *keyring.Ring, catalogue *schemas.Catalogue, reg prometheus.Registerer) *Service {
	cfg = cfg.WithDefaults()
	m := newMetrics(reg)
	return &Service{
		cfg:       cfg,
		log:       log,
		sources:   newSources(pool, ring, cfg.SourceCacheTTL),
		catalogue: catalogue,
		committer: newCommitter(pool, log, cfg.Commit, m),
		metrics:   m,
		verifiers: map[string]signature.Verifier{
			"stripe": signature.Stripe{Tolerance: cfg.Tolerance},
		},
	}
}

// Start starts the committers.
func (s *Service) Start() { s.committer.start() }

// Stop commits whatever was queued. Call it once the HTTP server stopped
// accepting requests.
func (s *Service) Stop() { s.committer.stop() }

// Register adds the ingest routes.
func (s *Service) Register(r gin.IRouter) {
	r.POST("/v1/ingest/:source_id", s.handleWebhook)
}

// rejection is a request refused before anything was stored.
type rejection struct {
	status int
	reason string // metric label and log attribute
	msg    string // what the caller is told
}

func (s *Service) reject(c *gin.Context, r rejection, attrs ...any) {
	s.metrics.requests.WithLabelValues(r.reason).Inc()
	s.log.LogAttrs(c.Request.Context(), slog.LevelInfo, "webhook rejected",
		append([]slog.Attr{slog.String("reason", r.reason), slog.Int("status", r.status), slog.String("source_id", c.Param("source_id"))}, argsToAttrs(attrs)...)...)
	if r.status == http.StatusServiceUnavailable {
		c.Header("Retry-After", "1")
	}
	c.AbortWithStatusJSON(r.status, gin.H{"error": r.msg})
}

func (s *Service) handleWebhook(c *gin.Context) {
	ctx := c.Request.Context()
	start := time.Now()
	sourceID := c.Param("source_id")
	if _, err := uuid.Parse(sourceID); err != nil {
		s.reject(c, rejection{http.StatusNotFound, "unknown_source", "unknown source"})
		return
	}
	src, err := s.sources.get(ctx, sourceID)
	switch {
	case errors.Is(err, errUnknownSource):
		s.reject(c, rejection{http.StatusNotFound, "unknown_source", "unknown source"})
		return
	case err != nil:
		s.reject(c, rejection{http.StatusServiceUnavailable, "source_lookup_failed", "temporarily unavailable"}, "error", err)
		return
	}
	if ct := c.ContentType(); ct != "application/json" {
		s.reject(c, rejection{http.StatusUnsupportedMediaType, "unsupported_media_type", "content type must be application/json"})
		return
	}
	limit := s.cfg.MaxBodyBytes
	if c.Request.ContentLength > limit {
		s.reject(c, rejection{http.StatusRequestEntityTooLarge, "too_large", "body exceeds " + strconv.FormatInt(limit, 10) + " bytes"})
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(c.Writer, c.Request.Body, limit))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			s.reject(c, rejection{http.StatusRequestEntityTooLarge, "too_large", "body exceeds " + strconv.FormatInt(limit, 10) + " bytes"})
			return
		}
		s.reject(c, rejection{http.StatusBadRequest, "unreadable_body", "could not read body"}, "error", err)
		return
	}

	verifier, ok := s.verifiers[src.Kind]
	if !ok {
		s.reject(c, rejection{http.StatusNotImplemented, "unsupported_kind", "source kind not supported"}, "kind", src.Kind)
		return
	}
	if _, err := verifier.Verify(signature.Delivery{Header: c.Request.Header, Body: body, Now: time.Now()}, src.Secrets); err != nil {
		reason := "bad_signature"
		if errors.Is(err, signature.ErrStale) {
			reason = "stale_timestamp"
		}
		s.reject(c, rejection{http.StatusUnauthorized, reason, "invalid signature"}, "tenant_id", src.TenantID, "error", err)
		return
	}

	// Authenticated from here on.
	pe, err := readEvent(src.Kind, body)
	if err != nil {
		s.reject(c, rejection{http.StatusBadRequest, "malformed_body", err.Error()}, "tenant_id", src.TenantID)
		return
	}
	d := s.delivery(src, pe, body, c.Request.Header)
	res := s.committer.submit(ctx, d)
	log := s.log.With(slog.String("tenant_id", src.TenantID), slog.String("source_id", src.ID),
		slog.String("event_id", pe.ID), slog.String("event_type", pe.Type))
	if res.err != nil {
		reason := "not_committed"
		if errors.Is(res.err, ErrOverloaded) {
			reason = "overloaded"
		}
		s.reject(c, rejection{http.StatusServiceUnavailable, reason, "not stored, retry later"}, "tenant_id", src.TenantID, "event_id", pe.ID, "error", res.err)
		return
	}
	s.metrics.requests.WithLabelValues(string(res.outcome)).Inc()
	s.metrics.latency.Observe(time.Since(start).Seconds())
	log.LogAttrs(ctx, slog.LevelDebug, "webhook stored", slog.String("outcome", string(res.outcome)), slog.Int64("inbox_id", res.inboxID))
	status := http.StatusAccepted
	if res.outcome == OutcomeDuplicate {
		status = http.StatusOK
	}
	c.JSON(status, gin.H{"outcome": res.outcome, "event_id": pe.ID})
}

// delivery decides where an authenticated event goes: published on its
// resource topic, kept as unhandled, or quarantined with the schema error.
func (s *Service) delivery(src *source, pe providerEvent, body []byte, h http.Header) *delivery {
	d := &delivery{
		TenantID:   src.TenantID,
		SourceID:   src.ID,
		Account:    src.Account,
		EventID:    pe.ID,
		EventType:  pe.Type,
		ObjectType: pe.ObjectType,
		ObjectID:   pe.ObjectID,
		Status:     "unhandled",
		Body:       body,
		Sum:        sha256.Sum256(body),
	}
	if !pe.Time.IsZero() {
		d.EventTime = &pe.Time
	}
	entry, known := s.catalogue.Lookup(src.Kind, pe.Type)
	if !known {
		return d
	}
	if err := entry.Validate(body); err != nil {
		d.Status, d.Reason = "quarantined", err.Error()
		return d
	}
	d.Status, d.ObjectType = "published", entry.ObjectType
	key := envelope.Key(src.TenantID, entry.ObjectType, pe.ObjectID)
	trace := h.Get("traceparent")
	if trace == "" {
		trace = envelope.NewTraceParent()
	}
	ev := envelope.Event{
		ID:            pe.ID,
		Source:        envelope.SourceURI(src.TenantID, src.ID),
		Type:          src.Kind + "." + pe.Type,
		Subject:       pe.ObjectID,
		Time:          pe.Time,
		TenantID:      src.TenantID,
		SourceAccount: src.Account,
		PartitionKey:  key,
		ContentType:   "application/json",
		TraceParent:   trace,
	}
	topic := s.cfg.Topics.Resource(entry.Topic)
	d.Topic, d.Key, d.Headers = &topic, []byte(key), ev.Headers()
	if len(body) <= envelope.MaxInlineBody {
		d.Payload = body
	}
	return d
}

func argsToAttrs(args []any) []slog.Attr {
	var out []slog.Attr
	for i := 0; i+1 < len(args); i += 2 {
		k, _ := args[i].(string)
		out = append(out, slog.Any(k, args[i+1]))
	}
	return out
}
