package consumers

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/plugin/kotel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/sluicehq/sluice/internal/telemetry"
)

// tracerName is the instrumentation scope of the runtime's own spans.
const tracerName = "github.com/sluicehq/sluice/internal/consumers"

// tracing is a group's spans: each record's receive span (franz-go's kotel
// hook, continuing the trace in the record's traceparent) and process span,
// one span per batch attempt linking the records it holds, and the effects
// handlers start under a record's process span. Its zero value is tracing
// off: no hook, no span.
type tracing struct {
	kotel  *kotel.Tracer
	tracer trace.Tracer
}

func newTracing(t telemetry.Tracing, group string) tracing {
	if !t.Enabled() {
		return tracing{}
	}
	return tracing{
		kotel: kotel.NewTracer(kotel.TracerProvider(t.Provider), kotel.TracerPropagator(t.Propagation()),
			kotel.ConsumerGroup(group)),
		tracer: t.Tracer(tracerName),
	}
}

// hooks are the client options that start each fetched record's span.
func (t tracing) hooks() []kgo.Opt {
	if t.kotel == nil {
		return nil
	}
	return []kgo.Opt{kgo.WithHooks(kotel.NewKotel(kotel.WithTracer(t.kotel)).Hooks()...)}
}

// startProcessing starts the process span of every record of a batch, a
// child of the record's receive span; they end with endProcessing, once
// the batch is committed or given up.
func (t tracing) startProcessing(entries []entry) {
	if t.kotel == nil {
		return
	}
	for i := range entries {
		e := &entries[i]
		_, e.rec.span = t.kotel.WithProcessSpan(e.rec.Record)
		e.rec.tracer = t.tracer
	}
}

// endProcessing ends the records' process spans: a dead-lettered record's
// as an error, every other one's as applied when committed.
func endProcessing(entries []entry, committed bool) {
	for _, e := range entries {
		span := e.rec.span
		if span == nil {
			continue
		}
		switch {
		case e.dead != nil:
			span.SetStatus(codes.Error, "dead-lettered")
			span.SetAttributes(attribute.Int("sluice.attempts", e.dead.attempts))
		case !committed:
			span.SetStatus(codes.Error, "not applied: the partition was given up")
		}
		span.End()
	}
}

// startBatch starts the span of one attempt at a batch's transaction: its
// own trace, linking each record's process span (a batch serves many
// traces). ctx carries it to the transaction's statements.
func (t tracing) startBatch(entries []entry, attempt int) (context.Context, trace.Span) {
	if t.tracer == nil {
		return telemetry.Start(context.Background(), nil, "")
	}
	links := make([]trace.Link, 0, len(entries))
	for _, e := range entries {
		if e.rec.span != nil {
			links = append(links, trace.Link{SpanContext: e.rec.span.SpanContext()})
		}
	}
	return t.tracer.Start(context.Background(), "consume batch", trace.WithLinks(links...),
		trace.WithAttributes(attribute.Int("sluice.batch.records", len(entries)), attribute.Int("sluice.attempt", attempt)))
}

// EndSpan ends span with err, if any, as its status: how an effect's span
// (StartEffect) ends.
func EndSpan(span trace.Span, err error) {
	if err != nil {
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}

// StartEffect starts the span of one effect of the record (a grant, a
// projection's update, an intent), a child of the span processing the
// record, with ctx's values and deadline; end it (EndSpan) once the effect
// is written. name "" names it after the record's type; start zero is now.
// An intent built with the returned context carries that span's trace to
// the next hop. Tracing off, it returns ctx and a span that records
// nothing, without allocating.
func (r Record) StartEffect(ctx context.Context, name string, start time.Time) (context.Context, trace.Span) {
	if r.span == nil {
		return telemetry.Start(ctx, nil, "")
	}
	if name == "" {
		name = "effect " + r.Event.Type
	}
	opts := []trace.SpanStartOption{trace.WithAttributes(attribute.String("cloudevents.event_type", r.Event.Type))}
	if !start.IsZero() {
		opts = append(opts, trace.WithTimestamp(start))
	}
	return r.tracer.Start(trace.ContextWithSpan(ctx, r.span), name, opts...)
}

// traced is ctx under the record's process span, for remote calls and log
// lines about the record; ctx itself when tracing is off.
func (r Record) traced(ctx context.Context) context.Context {
	if r.span == nil {
		return ctx
	}
	return trace.ContextWithSpan(ctx, r.span)
}
