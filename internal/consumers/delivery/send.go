package delivery

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/sluicehq/sluice/internal/egress"
	"github.com/sluicehq/sluice/internal/standardwebhooks"
	"github.com/sluicehq/sluice/internal/store/endpoints"
	"github.com/sluicehq/sluice/internal/telemetry"
)

// UserAgent names Sluice to receivers.
const UserAgent = endpoints.UserAgent

// answerKept is how much of an answer an attempt keeps.
const answerKept = 1 << 10

// send makes one attempt of m with s, t's sender, in a span of its own, and
// says how it went, and how long the target asked to wait (Retry-After),
// if it did. The body is transformed first, for every kind of target (the
// signature covers what is sent); a transformation that fails sends
// nothing and makes an attempt of class transformation, which kills the
// delivery. The attempt names the rules' version it sent with.
func (d *Deliverer) send(ctx context.Context, s sender, t *endpoints.Target, m message) (endpoints.Attempt, time.Duration) {
	ctx, span := d.startAttempt(ctx, t, m)
	if m.rulesVersion > t.RulesVersion {
		t = d.newerRules(ctx, t)
	}
	var (
		a    endpoints.Attempt
		wait time.Duration
	)
	if sent, err := d.transform(t, m); err != nil {
		a = endpoints.Attempt{Attempt: m.attempt, At: time.Now(), ErrorClass: endpoints.ErrorClassTransformation, Error: err.Error()}
	} else {
		a, wait = s.send(ctx, t, sent)
	}
	a.RulesVersion = t.RulesVersion
	endAttempt(span, a)
	return a, wait
}

// httpSender POSTs each delivery to the endpoint's URL with the egress
// client; it holds nothing of its own (the client keeps its connections).
type httpSender struct{ d *Deliverer }

func (httpSender) close() {}

func (h httpSender) send(ctx context.Context, t *endpoints.Target, m message) (endpoints.Attempt, time.Duration) {
	d := h.d
	now := time.Now()
	a := endpoints.Attempt{Attempt: m.attempt, At: now}
	req, err := request(ctx, t, m, now)
	if err != nil {
		a.ErrorClass, a.Error = "request", err.Error()
		return a, 0
	}
	if d.tracer != nil {
		// The attempt's span, child of the event's trace, is what the
		// receiver continues.
		d.cfg.Tracing.Propagation().Inject(ctx, propagation.HeaderCarrier(req.Header))
	}
	ctx, cancel := context.WithTimeout(ctx, d.cfg.Timeout)
	defer cancel()
	client := d.cfg.Client
	if d.deployment(t) {
		client = d.cfg.Deployment.Client
		req.Header.Set(IdempotencyKeyHeader, m.webhookID)
	}
	resp, err := client.Do(req.WithContext(ctx))
	a.LatencyMS = int(time.Since(now).Milliseconds())
	if err != nil {
		a.ErrorClass, a.Error = egress.Classify(err), err.Error()
		return a, 0
	}
	defer resp.Body.Close()
	answer, _ := egress.ReadAnswer(resp.Body, answerKept)
	a.LatencyMS = int(time.Since(now).Milliseconds())
	a.Status, a.Answer = resp.StatusCode, strings.ToValidUTF8(string(answer), "\uFFFD")
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		a.ErrorClass, a.Error = "status", fmt.Sprintf("the endpoint answered %d", resp.StatusCode)
		wait, _ := egress.RetryAfter(resp.Header.Get("Retry-After"), time.Now())
		return a, wait
	}
	return a, 0
}

// request is m's request to t: the body exactly as received, signed with
// every key of t (Standard Webhooks), with the CloudEvents HTTP binary
// headers and the trace it belongs to. The endpoint's static headers never
// replace Sluice's own.
func request(ctx context.Context, t *endpoints.Target, m message, now time.Time) (*http.Request, error) {
	if m.missing {
		return nil, errPayloadGone
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.URL, bytes.NewReader(m.body))
	if err != nil {
		return nil, fmt.Errorf("endpoint url: %w", err)
	}
	h := req.Header
	for k, v := range t.Headers {
		h.Set(k, v)
	}
	h.Set("Content-Type", m.contentType)
	h.Set("User-Agent", UserAgent)
	for _, f := range fields(t, m, now) {
		h.Set(f.Name, f.Value)
	}
	return req, nil
}

// fields are m's Standard Webhooks headers (id, timestamp, signatures
// with every key of t) and its CloudEvents binary-mode attributes, with
// the trace it belongs to: the same for every kind of target, so a
// receiver verifies and deduplicates a message as it does a request; the
// list is endpoints.Envelope's, which a rebuilt request shows too.
func fields(t *endpoints.Target, m message, now time.Time) []endpoints.SentHeader {
	env := endpoints.Envelope{WebhookID: m.webhookID, EventID: m.eventID, EventType: m.eventType, Source: m.src,
		Subject: m.subject, Traceparent: m.traceparent, EventTime: m.eventTime}
	return env.Headers(now, signatures(t.Keys, m, now))
}

// errPayloadGone: the event's body is no longer kept (past the payload
// horizon, or erased on request); no attempt can send it.
var errPayloadGone = errors.New("the event's body is no longer kept (payload horizon or erasure)")

// signatures is one v1 signature per key, space-separated, newest first.
func signatures(keys [][]byte, m message, now time.Time) string {
	sigs := make([]string, len(keys))
	for i, k := range keys {
		sigs[i] = standardwebhooks.Signature(k, m.webhookID, now, m.body)
	}
	return strings.Join(sigs, " ")
}

// startAttempt starts the attempt's client span as a child of the event's
// trace (the traceparent the event was accepted with), or, tracing off,
// returns ctx and a span that records nothing.
func (d *Deliverer) startAttempt(ctx context.Context, t *endpoints.Target, m message) (context.Context, trace.Span) {
	if d.tracer == nil {
		return ctx, trace.SpanFromContext(ctx)
	}
	if m.traceparent != "" {
		ctx = d.cfg.Tracing.Propagation().Extract(ctx, propagation.MapCarrier{"traceparent": m.traceparent})
	}
	return telemetry.Start(ctx, d.tracer, "delivery POST", trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attribute.String("sluice.endpoint_id", t.ID), attribute.String("sluice.webhook_id", m.webhookID),
			attribute.Int("sluice.attempt", m.attempt), attribute.String("sluice.event_type", m.eventType)))
}

func endAttempt(span trace.Span, a endpoints.Attempt) {
	if a.Status != 0 {
		span.SetAttributes(attribute.Int("http.response.status_code", a.Status))
	}
	if !a.OK() {
		span.SetStatus(codes.Error, a.ErrorClass)
	}
	span.End()
}
