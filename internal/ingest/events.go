package ingest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/sluicehq/sluice/internal/provider"
)

// MaxBatchEvents is the most events one POST /v1/events may carry.
const MaxBatchEvents = 1000

// apiKeys resolves tenant API keys, stored as SHA-256 digests, and keeps
// them briefly like sources: a revoked key stops working within the TTL.
type apiKeys struct {
	pool  *pgxpool.Pool
	cache *ttlCache[*source] // by the key's digest; nil value: no such key
}

func newAPIKeys(pool *pgxpool.Pool, ttl time.Duration) *apiKeys {
	k := &apiKeys{pool: pool}
	k.cache = newTTLCache(ttl, k.load)
	return k
}

// get returns the api source the key speaks for, or errUnknownSource. The
// key is looked up by its digest: neither the cache nor the database holds
// the key itself.
func (k *apiKeys) get(ctx context.Context, key string) (*source, error) {
	sum := sha256.Sum256([]byte(key))
	src, err := k.cache.get(ctx, string(sum[:]))
	if err != nil {
		return nil, err
	}
	if src == nil {
		return nil, errUnknownSource
	}
	return src, nil
}

func (k *apiKeys) load(ctx context.Context, digest string) (*source, error) {
	src := &source{Kind: provider.KindAPI}
	var (
		rate  *float64
		burst *int
	)
	err := k.pool.QueryRow(ctx, apiKeySQL, []byte(digest)).Scan(&src.TenantID, &src.ID, &src.Account, &rate, &burst)
	src.Limits = override(rate, burst)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("look up api key: %w", err)
	}
	return src, nil
}

// batchEvent is one first-party event. Its raw JSON, exactly as sent, is
// what is stored and published: the same bytes compare as duplicates.
type batchEvent struct {
	ID       string          `json:"id"`
	Type     string          `json:"type"`
	ObjectID string          `json:"object_id"`
	Time     *time.Time      `json:"time,omitempty"`
	Data     json.RawMessage `json:"data"`
}

// EventResult is the answer for one event of a batch.
type EventResult struct {
	Index   int     `json:"index"`
	ID      string  `json:"id,omitempty"`
	Status  int     `json:"status"`            // what a single webhook would have been answered
	Outcome Outcome `json:"outcome,omitempty"` // when stored
	Error   string  `json:"error,omitempty"`
}

// handleEvents is POST /v1/events: a tenant's own services send up to
// MaxBatchEvents events at once with an API key. Each event gets its own
// result under the webhook rules (dedup, conflict, quarantine, unhandled);
// the answer is 200 when every event has a final result, and 503 when any
// could not be committed (retrying the whole batch is safe: the stored
// ones come back as duplicates).
func (s *Service) handleEvents(c *gin.Context) {
	start := time.Now()
	defer s.metrics.observe(c, start)
	c.Set(kindKey, string(provider.KindAPI))
	src, ok := s.apiSource(c)
	if !ok {
		return
	}
	c.Set(tenantKey, src.TenantID)
	tenant := slog.String("tenant_id", src.TenantID)
	events, ok := s.readBatch(c, src, tenant)
	if !ok {
		return
	}
	results := make([]EventResult, len(events))
	var (
		ds    []*delivery
		index []int
	)
	trace := traceParent(c.Request)
	catalogue := s.catalogueOf(c.Request.Context(), src.TenantID)
	for i, raw := range events {
		results[i].Index = i
		pe, err := readBatchEvent(raw, catalogue)
		results[i].ID = pe.ID
		if errors.Is(err, errCatalogue) {
			s.reject(c, rejection{http.StatusServiceUnavailable, "catalogue_unavailable", "temporarily unavailable"}, 0, tenant, slog.Any("error", err))
			return
		}
		if err != nil {
			results[i].Status, results[i].Error = http.StatusBadRequest, err.Error()
			continue
		}
		ds = append(ds, s.delivery(src, pe, bytes.Clone(raw), trace, start))
		index = append(index, i)
	}
	status := s.storeAll(c.Request.Context(), src.TenantID, ds, index, results)
	if status != http.StatusOK {
		c.Header("Retry-After", "1")
	}
	c.Set(outcomeKey, "batch")
	s.log.LogAttrs(c.Request.Context(), slog.LevelDebug, "event batch handled", tenant, slog.Int("events", len(events)), slog.Int("status", status))
	c.JSON(status, gin.H{"results": results})
}

// apiSource finds the api source an API key speaks for; when there is none,
// the request is answered.
func (s *Service) apiSource(c *gin.Context) (*source, bool) {
	key, ok := strings.CutPrefix(c.GetHeader("Authorization"), "Bearer ")
	if !ok || key == "" {
		s.reject(c, rejection{http.StatusUnauthorized, "missing_api_key", "an API key is required (Authorization: Bearer <key>)"}, 0)
		return nil, false
	}
	src, err := s.apiKeys.get(c.Request.Context(), key)
	switch {
	case errors.Is(err, errUnknownSource):
		s.reject(c, rejection{http.StatusUnauthorized, "bad_api_key", "invalid API key"}, 0)
		return nil, false
	case err != nil:
		s.reject(c, rejection{http.StatusServiceUnavailable, "source_lookup_failed", "temporarily unavailable"}, 0, slog.Any("error", err))
		return nil, false
	}
	return src, true
}

// readBatch reads a batch's events within the batch limits and the
// tenant's rate; when it cannot, the request is answered.
func (s *Service) readBatch(c *gin.Context, src *source, tenant slog.Attr) ([]json.RawMessage, bool) {
	if !isJSON(c.GetHeader("Content-Type")) {
		s.reject(c, rejectMediaType, 0, tenant)
		return nil, false
	}
	// The key is checked already: the body is held, not budgeted.
	body, ok := s.readBody(c, s.cfg.MaxBatchBodyBytes, &hold{})
	if !ok || s.gone(c) {
		return nil, false
	}
	if err := s.cfg.Shape.check(body); err != nil {
		s.reject(c, rejection{http.StatusBadRequest, "too_complex", err.Error()}, 0, tenant)
		return nil, false
	}
	var req struct {
		Events []json.RawMessage `json:"events"`
	}
	if err := json.Unmarshal(body, &req); err != nil || len(req.Events) == 0 {
		s.reject(c, rejection{http.StatusBadRequest, "malformed_body", `body must be {"events":[...]} with at least one event`}, 0, tenant)
		return nil, false
	}
	if len(req.Events) > MaxBatchEvents {
		s.reject(c, rejection{http.StatusRequestEntityTooLarge, "too_many_events", fmt.Sprintf("at most %d events per request", MaxBatchEvents)}, 0, tenant)
		return nil, false
	}
	if wait, ok := s.tenantLimit.takeWith(src.TenantID, len(req.Events), time.Now(), src.Limits); !ok {
		s.reject(c, rejectRateLimited, wait, tenant)
		return nil, false
	}
	return req.Events, true
}

// storeAll commits a batch's readable events (ds, at index in results) and
// fills in their results; it returns 200, or 503 when any was not
// committed (retrying the whole batch is safe).
func (s *Service) storeAll(ctx context.Context, tenantID string, ds []*delivery, index []int, results []EventResult) int {
	status := http.StatusOK
	for j, res := range s.committer.submitAll(ctx, tenantID, ds) {
		r := &results[index[j]]
		if res.err != nil {
			r.Status, r.Error, status = http.StatusServiceUnavailable, "not stored, retry later", http.StatusServiceUnavailable
			continue
		}
		r.Status, r.Outcome = res.outcome.status(), res.outcome
		s.metrics.events.WithLabelValues(string(res.outcome)).Inc()
	}
	return status
}

// readBatchEvent reads one first-party event: id, type and object id are
// required; time is optional (RFC 3339). A tenant's entry for the type may
// point elsewhere in the event for the object id or the time (JSON
// pointers into the event as sent): its pointers win over object_id and
// time, as an entry's win over a source's defaults.
func readBatchEvent(raw json.RawMessage, catalogue lookup) (providerEvent, error) {
	var e batchEvent
	if err := json.Unmarshal(raw, &e); err != nil {
		return providerEvent{}, fmt.Errorf("event is not a JSON object with id, type, object_id, time and data: %w", err)
	}
	pe := providerEvent{ID: e.ID, Type: e.Type, ObjectID: e.ObjectID}
	// The document, parsed once here, serves the entry's pointers, the
	// canonical JSON sum and the schema check: each parsed the event again.
	// What parseJSON refuses (encoding/json read it) is left to them, as
	// before.
	if doc, err := parseJSON(raw); err == nil {
		pe.doc = doc
	}
	if e.Time != nil {
		pe.Time = e.Time.UTC()
	}
	if e.ID == "" || e.Type == "" {
		return pe, errors.New("id and type are required")
	}
	if err := checkIdentifiers(e.ID, e.Type); err != nil {
		return pe, err
	}
	if err := pe.find(catalogue, string(provider.KindAPI)); err != nil {
		return pe, err
	}
	if err := pe.entryLocations(raw); err != nil {
		return pe, err
	}
	if pe.ObjectID == "" && pe.Problem == "" {
		return pe, errors.New("object_id is required")
	}
	if err := checkIdentifiers(pe.ObjectID); err != nil {
		return pe, err
	}
	return pe, nil
}

// entryLocations reads the object id and the time where the type's entry
// points into the event, when it does; the event's own fields otherwise.
func (pe *providerEvent) entryLocations(raw json.RawMessage) error {
	e := pe.Entry
	if e == nil || (e.ObjectIDPointer == "" && e.EventTimePointer == "") {
		return nil
	}
	if pe.doc == nil {
		doc, err := parseJSON(raw)
		if err != nil {
			return err
		}
		pe.doc = doc
	}
	// An empty pointer leaves the event's own field as read.
	pe.locate(provider.Event{ObjectIDPointer: e.ObjectIDPointer, TimePointer: e.EventTimePointer, TimeFormat: e.EventTimeFormat}, nil)
	return nil
}

// validTrace keeps a W3C traceparent only when it has the right shape.
func validTrace(tp string) string {
	if len(tp) != 55 || strings.Count(tp, "-") != 3 {
		return ""
	}
	return tp
}
